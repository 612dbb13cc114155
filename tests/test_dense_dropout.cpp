// A Dense layer with a Dropout after it runs both output stages in one launch each way
// (bias_activation_dropout_forward, bias_activation_dropout_backward): the same bits as the two
// launches they replace, on views at offsets with padding untouched (in a model:
// test_dense_dropout_model.cpp).
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <anycl/error.hpp>

#include <cmath>

#include "helpers.hpp"
#include "ops/activation.hpp"
#include "ops/dropout.hpp"
#include "reference/activation.hpp"
#include "reference/dropout.hpp"

using anycl::Activation;
using anycl::DropoutMask;

namespace {

const Activation kActs[] = {Activation::linear,     Activation::relu, Activation::tanh, Activation::sigmoid,
                            Activation::leaky_relu, Activation::elu,  Activation::gelu};
constexpr float kSentinel = -777.f;

struct Case {
  size_t rows, cols;
  uint32_t row_base;
};
// Odd sizes (a row's end inside a 16- or 64-element block, a mask block off its 64 boundary) and
// the reference MLP's 128 × 512.
const Case kCases[] = {{1, 3, 0}, {3, 5, 7}, {13, 129, 0}, {129, 67, 3}, {128, 512, 0}, {7, 16, 1}};

// (rows + 4, cols) filled with the sentinel, the values (if any) at rows 2 .. rows + 1.
anycl::Tensor padded(anycl::Runtime& rt, size_t rows, size_t cols, const std::vector<float>& values) {
  anycl::Tensor all(rt, {rows + 4, cols});
  all.fill(kSentinel);
  if (!values.empty()) all.rows(2, rows).upload(values);
  return all;
}

std::vector<float> padded_host(size_t rows, size_t cols, const std::vector<float>& values) {
  std::vector<float> all((rows + 4) * cols, kSentinel);
  std::copy(values.begin(), values.end(), all.begin() + 2 * cols);
  return all;
}

}  // namespace

TEST_CASE(
    "bias_activation_dropout_forward gives the bits of bias_activation_forward then dropout_forward_keep") {
  auto& rt = anycl::test::runtime();
  anycl::BiasActivation bias_act(rt);
  anycl::DropoutOp dropout(rt);
  unsigned seed = 300;
  for (const Case c : kCases)
    for (Activation act : kActs) {
      const std::string what =
          fmt::format("{} ({}, {}) row_base {}", anycl::to_string(act), c.rows, c.cols, c.row_base);
      CAPTURE(what);
      const size_t n = c.rows * c.cols, keep_offset = 5;
      const DropoutMask m{0.3f, 0xfeedull + seed, 9u, 0x10001u, c.row_base};
      const auto z = anycl::test::random_floats(n, -3.f, 3.f, seed++);
      const auto b = anycl::test::random_floats(c.cols, -1.f, 1.f, seed++);
      const auto bias = anycl::Tensor::from_host(rt, {c.cols}, b);
      // Fused: y and out are views two rows into padded tensors, the mask at an offset.
      anycl::Tensor y_all = padded(rt, c.rows, c.cols, z), out_all = padded(rt, c.rows, c.cols, {});
      anycl::Tensor y = y_all.rows(2, c.rows), out = out_all.rows(2, c.rows);
      anycl::DeviceBuffer keep = anycl::test::device_copy(rt, std::vector<uint8_t>(n + keep_offset + 3, 7));
      dropout.forward_bias_activation(y, bias, act, out, m, keep, keep_offset);
      // The two launches it replaces.
      auto y2 = anycl::Tensor::from_host(rt, {c.rows, c.cols}, z);
      anycl::Tensor out2(rt, {c.rows, c.cols});
      anycl::DeviceBuffer keep2 = anycl::test::device_copy(rt, std::vector<uint8_t>(n, 7));
      bias_act.forward(y2, bias, act);
      dropout.forward(y2, out2, m, &keep2);

      anycl::test::check_close(y_all.download(), padded_host(c.rows, c.cols, y2.download()), 0, 0, "y");
      anycl::test::check_close(out_all.download(), padded_host(c.rows, c.cols, out2.download()), 0, 0, "out");
      const auto bytes = anycl::test::read_back<uint8_t>(keep, n + keep_offset + 3);
      const auto bytes2 = anycl::test::read_back<uint8_t>(keep2, n);
      size_t wrong = 0;
      for (size_t i = 0; i < n; ++i) wrong += bytes[keep_offset + i] != bytes2[i];
      for (size_t i : {size_t(0), keep_offset - 1, n + keep_offset, n + keep_offset + 2})
        wrong += bytes[i] != 7;
      CHECK_MESSAGE(wrong == 0, wrong, " mask bytes differ or padding changed");
      // And the mask is the reference's: out is y where kept (times 1/(1 − rate)), 0 where dropped.
      const auto y_host = y2.download();
      std::vector<float> ref(n);
      anycl::reference::dropout_forward(y_host.data(), ref.data(), c.rows, c.cols, m);
      anycl::test::check_close(out2.download(), ref, 0, 0, "reference");
    }
}

TEST_CASE(
    "bias_activation_dropout_backward gives the bits of dropout_backward_kept then "
    "bias_activation_backward") {
  auto& rt = anycl::test::runtime();
  anycl::BiasActivation bias_act(rt);
  anycl::DropoutOp dropout(rt);
  unsigned seed = 400;
  for (const Case c : kCases)
    for (Activation act : kActs) {
      const std::string what = fmt::format("{} ({}, {})", anycl::to_string(act), c.rows, c.cols);
      CAPTURE(what);
      const size_t n = c.rows * c.cols, keep_offset = 3;
      const float rate = 0.25f, scale = 1.0f / (1.0f - rate);
      const DropoutMask m{rate, 0xabcull + seed, 2u, 0x10002u, c.row_base};
      // y as the forward leaves it (activated), and the mask its dropout stored.
      auto y =
          anycl::Tensor::from_host(rt, {c.rows, c.cols}, anycl::test::random_floats(n, -3.f, 3.f, seed++));
      bias_act.forward(y, anycl::Tensor::from_host(rt, {c.cols}, std::vector<float>(c.cols, 0.f)), act);
      anycl::Tensor dropped(rt, {c.rows, c.cols});
      anycl::DeviceBuffer keep(rt, n + keep_offset, "mask");
      dropout.forward(y, dropped, m, &keep, keep_offset);
      const auto dy_host = anycl::test::random_floats(n, -1.f, 1.f, seed++);

      anycl::Tensor dy_all = padded(rt, c.rows, c.cols, dy_host), db_all(rt, {c.cols + 6});
      db_all.fill(kSentinel);
      anycl::Tensor dy = dy_all.rows(2, c.rows), db = db_all.rows(3, c.cols);
      bias_act.backward_dropped(y, dy, keep, keep_offset, scale, db, act);

      auto dy2 = anycl::Tensor::from_host(rt, {c.rows, c.cols}, dy_host);
      anycl::Tensor db2(rt, {c.cols});
      dropout.backward_kept(dy2, keep, keep_offset, rate);
      bias_act.backward(y, dy2, db2, act);

      anycl::test::check_close(dy_all.download(), padded_host(c.rows, c.cols, dy2.download()), 0, 0, "dz");
      std::vector<float> db_ref(c.cols + 6, kSentinel);
      const auto db2_host = db2.download();
      std::copy(db2_host.begin(), db2_host.end(), db_ref.begin() + 3);
      anycl::test::check_close(db_all.download(), db_ref, 0, 0, "dbias");
    }
  anycl::DeviceBuffer small(rt, 10, "mask");
  auto y = anycl::Tensor::from_host(rt, {2, 6}, std::vector<float>(12, 1.f));
  auto dy = anycl::Tensor::from_host(rt, {2, 6}, std::vector<float>(12, 1.f));
  anycl::Tensor db(rt, {6});
  CHECK_THROWS_AS(bias_act.backward_dropped(y, dy, small, 0, 2.f, db, Activation::relu),
                  anycl::ValidationError);
  anycl::Tensor out(rt, {2, 6});
  CHECK_THROWS_AS(dropout.forward_bias_activation(y, db, Activation::relu, out, {0.5f}, small),
                  anycl::ValidationError);  // 12 mask bytes in 10
}
