// Counter-based dropout against the host Philox reference: bit-identical masks, the same mask
// forward and backward, the kept fraction and scale, and a fresh mask per step/stream/seed.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <anycl/error.hpp>

#include <cmath>

#include "helpers.hpp"
#include "ops/dropout.hpp"
#include "reference/dropout.hpp"
#include "reference/philox.hpp"

using anycl::DropoutMask;

namespace {

// Nonzero inputs, so y == 0 exactly where the mask dropped the element.
std::vector<float> nonzero_floats(size_t n, unsigned seed) {
  auto v = anycl::test::random_floats(n, 0.5f, 2.f, seed);
  for (size_t i = 0; i < n; i += 2) v[i] = -v[i];
  return v;
}

std::vector<float> device_forward(const std::vector<float>& x, size_t rows, size_t cols,
                                  const DropoutMask& m) {
  auto& rt = anycl::test::runtime();
  anycl::DropoutOp op(rt);
  auto xt = anycl::Tensor::from_host(rt, {rows, cols}, x);
  anycl::Tensor y(rt, {rows, cols});
  y.fill(std::nanf(""));
  op.forward(xt, y, m);
  return y.download();
}

size_t count_diff_mask(const std::vector<float>& a, const std::vector<float>& b) {
  size_t diff = 0;
  for (size_t i = 0; i < a.size(); ++i) diff += (a[i] == 0.f) != (b[i] == 0.f);
  return diff;
}

}  // namespace

// Known-answer vectors published with Random123 (kat_vectors): pins the algorithm itself.
TEST_CASE("reference Philox4x32-10 matches the Random123 known answers") {
  using anycl::reference::philox4x32;
  CHECK(philox4x32({0, 0, 0, 0}, {0, 0}) ==
        anycl::reference::Philox4{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8});
  const uint32_t f = 0xffffffffu;
  CHECK(philox4x32({f, f, f, f}, {f, f}) ==
        anycl::reference::Philox4{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd});
  CHECK(philox4x32({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}) ==
        anycl::reference::Philox4{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1});
}

TEST_CASE("dropout forward is bit-identical to the reference on views at offsets") {
  auto& rt = anycl::test::runtime();
  anycl::DropoutOp op(rt);
  unsigned seed = 10;
  // {9, 128}: row_base·cols a multiple of 64, so every block takes the kernels' 16-lane path
  for (auto [rows, cols] : {std::pair<size_t, size_t>{1, 1}, {7, 31}, {31, 7}, {65, 65}, {1025, 7}, {9, 128}})
    for (float rate : {0.f, 0.1f, 0.5f, 0.9f}) {
      const DropoutMask m{rate, 0x123456789abcull + seed, 7u + seed, 3u, 11u};
      const auto x = nonzero_floats(rows * cols, seed++);
      // x and y are views at different offsets of their own padded buffers.
      anycl::Tensor x_all(rt, {rows + 3, cols}), y_all(rt, {rows + 5, cols});
      x_all.fill(1.f);
      y_all.fill(std::nanf(""));
      anycl::Tensor xv = x_all.rows(1, rows), yv = y_all.rows(4, rows);
      xv.upload(x);
      op.forward(xv, yv, m);
      std::vector<float> ref(x.size());
      anycl::reference::dropout_forward(x.data(), ref.data(), rows, cols, m);
      const std::string what = fmt::format("dropout ({}, {}) rate {}", rows, cols, rate);
      anycl::test::check_close(yv.download(), ref, 0, 0, what);
      const auto before = y_all.rows(0, 4).download();
      for (float v : before) CHECK_MESSAGE(std::isnan(v), what, " wrote before its view");
    }
}

TEST_CASE("dropout backward applies the forward mask (backward of dy equals forward of dy)") {
  auto& rt = anycl::test::runtime();
  anycl::DropoutOp op(rt);
  const size_t rows = 65, cols = 31;
  const DropoutMask m{0.3f, 42, 5, 1, 0};
  const auto x = nonzero_floats(rows * cols, 1), dy_host = nonzero_floats(rows * cols, 2);
  const auto y = device_forward(x, rows, cols, m);
  const auto fwd_of_dy = device_forward(dy_host, rows, cols, m);

  anycl::Tensor dy_all(rt, {rows + 2, cols});
  dy_all.fill(-5.f);
  anycl::Tensor dy = dy_all.rows(2, rows);
  dy.upload(dy_host);
  op.backward(dy, m);
  const auto dx = dy.download();
  anycl::test::check_close(dx, fwd_of_dy, 0, 0, "backward vs forward of dy");
  std::vector<float> ref = dy_host;
  anycl::reference::dropout_backward(ref.data(), rows, cols, m);
  anycl::test::check_close(dx, ref, 0, 0, "backward vs reference");
  CHECK(count_diff_mask(dx, y) == 0);  // the same elements dropped as in forward
  const auto pad = dy_all.rows(0, 2).download();
  anycl::test::check_close(pad, std::vector<float>(pad.size(), -5.f), 0, 0, "dy padding");
}

TEST_CASE("dropout keeps about 1-rate of a large tensor and scales kept values by 1 over 1-rate") {
  const size_t rows = 1024, cols = 1025;  // ~1M elements: σ of the kept fraction ≈ 5e-4
  const auto x = nonzero_floats(rows * cols, 3);
  for (float rate : {0.2f, 0.5f}) {
    const DropoutMask m{rate, 2024, 1, 0, 0};
    const auto y = device_forward(x, rows, cols, m);
    const float scale = 1.0f / (1.0f - rate);
    size_t kept = 0, bad_scale = 0;
    for (size_t i = 0; i < y.size(); ++i)
      if (y[i] != 0.f) {
        ++kept;
        bad_scale += y[i] != x[i] * scale;
      }
    CHECK(bad_scale == 0);
    CHECK(double(kept) / double(y.size()) == doctest::Approx(1.0 - rate).epsilon(0.005));
  }
}

TEST_CASE("dropout draws a different mask for another step or stream or seed and rate 0 is identity") {
  const size_t rows = 64, cols = 100;
  const auto x = nonzero_floats(rows * cols, 4);
  const DropoutMask base{0.5f, 77, 1, 0, 0};
  const auto y0 = device_forward(x, rows, cols, base);
  CHECK(count_diff_mask(y0, device_forward(x, rows, cols, base)) == 0);  // deterministic
  DropoutMask step = base, stream = base, seed = base, seed_hi = base;
  step.step = 2, stream.stream = 1, seed.seed = 78, seed_hi.seed = 77 + (1ull << 32);
  for (const DropoutMask* other : {&step, &stream, &seed, &seed_hi})
    CHECK(count_diff_mask(y0, device_forward(x, rows, cols, *other)) > x.size() / 3);  // ~half differ

  anycl::test::check_close(device_forward(x, rows, cols, {0.f, 77, 1, 0, 0}), x, 0, 0, "rate 0");
}

TEST_CASE("a shard with row_base sees the same mask as the whole batch") {
  auto& rt = anycl::test::runtime();
  anycl::DropoutOp op(rt);
  const size_t rows = 10, cols = 33;
  const auto x = nonzero_floats(rows * cols, 5);
  const DropoutMask whole{0.4f, 9, 3, 2, 0};
  const auto y_whole = device_forward(x, rows, cols, whole);
  auto t = anycl::Tensor::from_host(rt, {rows, cols}, x);
  // Shards starting at global element 99 and 231 (not multiples of 4): a Philox call spans two shards.
  for (auto [begin, count] : {std::pair<size_t, size_t>{0, 3}, {3, 4}, {7, 3}}) {
    DropoutMask shard = whole;
    shard.row_base = uint32_t(begin);
    anycl::Tensor v = t.rows(begin, count);
    op.forward(v, v, shard);  // in place
  }
  anycl::test::check_close(t.download(), y_whole, 0, 0, "sharded, in place");
}

TEST_CASE("dropout backward matches the reference at odd sizes - offsets and row_base - past 2^32 too") {
  auto& rt = anycl::test::runtime();
  anycl::DropoutOp op(rt);
  unsigned seed = 30;
  // Sizes that are not multiples of 4, 16 or a work-group, and row bases whose element index
  // (row_base + r)·cols + c wraps past 2^32 (the kernels count it modulo 2^32, as the reference).
  for (auto [rows, cols] : {std::pair<size_t, size_t>{1, 3}, {3, 5}, {13, 129}, {129, 67}})
    for (uint32_t row_base : {0u, 5u, 0xfffffff0u / uint32_t(cols)}) {
      const DropoutMask m{0.35f, 0xfeedull + seed, 9u, 2u, row_base};
      const auto dy_host = nonzero_floats(rows * cols, seed++);
      anycl::Tensor dy_all(rt, {rows + 3, cols});
      dy_all.fill(-7.f);
      anycl::Tensor dy = dy_all.rows(1, rows);
      dy.upload(dy_host);
      op.backward(dy, m);
      std::vector<float> ref = dy_host;
      anycl::reference::dropout_backward(ref.data(), rows, cols, m);
      const std::string what = fmt::format("dropout backward ({}, {}) row_base {}", rows, cols, row_base);
      anycl::test::check_close(dy.download(), ref, 0, 0, what);
      std::vector<float> pad = dy_all.rows(0, 1).download(), tail = dy_all.rows(rows + 1, 2).download();
      pad.insert(pad.end(), tail.begin(), tail.end());
      anycl::test::check_close(pad, std::vector<float>(pad.size(), -7.f), 0, 0, what + " padding");
      if (rows * cols > 16) CHECK_MESSAGE(count_diff_mask(dy.download(), dy_host) > 0, what, " dropped none");
    }
}

// The mask the forward stores (a byte per element, at an offset in a larger buffer whose other
// bytes stay as they were) is the one the backward regenerates: the same bits either way.
TEST_CASE("dropout backward from the forward's stored mask equals the regenerated one, at odd sizes") {
  auto& rt = anycl::test::runtime();
  anycl::DropoutOp op(rt);
  unsigned seed = 60;
  for (auto [rows, cols] : {std::pair<size_t, size_t>{1, 3}, {3, 5}, {13, 129}, {129, 67}})
    for (uint32_t row_base : {0u, 7u}) {
      const DropoutMask m{0.3f, 0xbeefull + seed, 4u, 1u, row_base};
      const std::string what = fmt::format("kept mask ({}, {}) row_base {}", rows, cols, row_base);
      const size_t n = rows * cols, offset = 5;
      anycl::DeviceBuffer keep = anycl::test::device_copy(rt, std::vector<uint8_t>(n + offset + 3, 7));
      const auto x_host = nonzero_floats(n, seed++);
      const auto x = anycl::Tensor::from_host(rt, {rows, cols}, x_host);
      anycl::Tensor y(rt, {rows, cols}), y_plain(rt, {rows, cols});
      op.forward(x, y, m, &keep, offset);
      op.forward(x, y_plain, m);
      anycl::test::check_close(y.download(), y_plain.download(), 0, 0, what + " forward");
      const auto bytes = anycl::test::read_back<uint8_t>(keep, n + offset + 3);
      size_t wrong = 0;
      const auto y_host = y.download();
      for (size_t i = 0; i < n; ++i) wrong += bytes[offset + i] != (y_host[i] != 0.f ? 1 : 0);
      for (size_t i : {size_t(0), offset - 1, n + offset, n + offset + 2}) wrong += bytes[i] != 7;
      CHECK_MESSAGE(wrong == 0, what, ": ", wrong, " mask bytes wrong");
      const auto dy_host = nonzero_floats(n, seed++);
      auto dy_kept = anycl::Tensor::from_host(rt, {rows, cols}, dy_host);
      auto dy_regenerated = anycl::Tensor::from_host(rt, {rows, cols}, dy_host);
      op.backward_kept(dy_kept, keep, offset, m.rate);
      op.backward(dy_regenerated, m);
      anycl::test::check_close(dy_kept.download(), dy_regenerated.download(), 0, 0, what + " backward");
    }
  anycl::DeviceBuffer small = anycl::test::device_copy(rt, std::vector<uint8_t>(10, 0));
  auto dy = anycl::Tensor::from_host(rt, {2, 6}, std::vector<float>(12, 1.f));
  CHECK_THROWS_AS(op.backward_kept(dy, small, 0, 0.5f), anycl::ValidationError);  // 12 bytes in 10
  CHECK_THROWS_AS(op.forward(dy, dy, {0.5f}, &small, 4), anycl::ValidationError);
}

TEST_CASE("dropout rejects rates outside 0 to 1 and mismatched shapes") {
  auto& rt = anycl::test::runtime();
  anycl::DropoutOp op(rt);
  anycl::Tensor x(rt, {4, 3}), y(rt, {4, 3}), z(rt, {3, 4});
  for (float rate : {1.f, -0.1f, std::nanf("")}) {
    CHECK_THROWS_WITH_AS(op.forward(x, y, {rate}), doctest::Contains("[0, 1)"), anycl::ValidationError);
    CHECK_THROWS_AS(op.backward(y, {rate}), anycl::ValidationError);
  }
  CHECK_THROWS_AS(op.forward(x, z, {0.5f}), anycl::ValidationError);
}
