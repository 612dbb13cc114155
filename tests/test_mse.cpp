// Fused mean squared error (cl_kernels/mse.cl) against tests/reference/mse.hpp: loss and MAE sums in
// the chosen metrics slot only, the gradient against the reference and finite differences, and
// make_loss() describing both losses.
#include <doctest/doctest.h>
#include <anycl/error.hpp>
#include <anycl/losses/loss.hpp>
#include <anycl/losses/mse.hpp>
#include <anycl/nn/sequential.hpp>
#include <anycl/optim/optimizer.hpp>

#include <cmath>

#include "helpers.hpp"
#include "reference/mse.hpp"

namespace {

constexpr float kSentinel = -777.f;
constexpr size_t kSlots = 4;

anycl::DeviceBuffer float_buffer(anycl::Runtime& rt, const std::vector<float>& v) {
  return anycl::test::device_copy(rt, v);
}

std::vector<float> read_metrics(anycl::Runtime&, const anycl::DeviceBuffer& b) {
  return anycl::test::read_back<float>(b, 2 * kSlots);
}

struct Run {
  std::vector<float> grad, outputs, metrics;
};

// Outputs, targets and gradient all at non-zero offsets; the gradient NaN-poisoned, the rows
// around the outputs set to 50 (a neighbour read by mistake changes the loss).
Run run_device(const std::vector<float>& y, const std::vector<float>& t, size_t rows, size_t width,
               float grad_scale, size_t slot, bool with_grad) {
  auto& rt = anycl::test::runtime();
  auto loss = anycl::make_loss(rt, "mse");
  anycl::Tensor y_all(rt, {rows + 4, width}), g_all(rt, {rows + 2, width});
  y_all.fill(50.f);
  g_all.fill(std::nanf(""));
  anycl::Tensor out = y_all.rows(3, rows), grad = g_all.rows(1, rows);
  out.upload(y);
  std::vector<float> target_buf(7, 50.f);
  target_buf.insert(target_buf.end(), t.begin(), t.end());
  const auto tb = float_buffer(rt, target_buf);
  auto metrics = float_buffer(rt, std::vector<float>(2 * kSlots, kSentinel));
  loss->run(out, {&tb, 7}, with_grad ? &grad : nullptr, grad_scale, metrics, slot);
  return {grad.download(), out.download(), read_metrics(rt, metrics)};
}

void check_metrics(const std::vector<float>& got, size_t slot, const anycl::reference::MseMetrics& ref) {
  for (size_t i = 0; i < got.size(); ++i)
    if (i / 2 != slot) CHECK_MESSAGE(got[i] == kSentinel, "metrics[", i, "] touched");
  anycl::test::check_close({got[2 * slot]}, {float(ref.loss_sum)}, 1e-5, 1e-5, "mse loss sum");
  anycl::test::check_close({got[2 * slot + 1]}, {float(ref.mae_sum)}, 1e-5, 1e-5, "mae sum");
}

}  // namespace

TEST_CASE("mse matches the reference in gradient and loss sum and mae sum") {
  for (const auto& shape : {std::pair<size_t, size_t>{1, 1}, {7, 3}, {300, 10}, {513, 1}}) {
    const size_t rows = shape.first, width = shape.second;  // named variables: CAPTURE's lambdas need them
    CAPTURE(rows);
    CAPTURE(width);
    const auto y = anycl::test::random_floats(rows * width, -3.f, 3.f, unsigned(rows + width));
    const auto t = anycl::test::random_floats(rows * width, -3.f, 3.f, unsigned(rows * width + 1));
    const float scale = 1.f / float(rows);
    const Run got = run_device(y, t, rows, width, scale, 2, true);
    std::vector<float> ref_grad(rows * width);
    const auto ref = anycl::reference::mse(y.data(), t.data(), rows, width, double(scale), ref_grad.data());
    anycl::test::check_close(got.grad, ref_grad, 1e-7, 1e-5, "mse gradient");
    check_metrics(got.metrics, 2, ref);
  }
}

TEST_CASE("mse gradient agrees with finite differences of the summed loss") {
  const size_t rows = 5, width = 4;
  const auto y = anycl::test::random_floats(rows * width, -2.f, 2.f, 61);
  const auto t = anycl::test::random_floats(rows * width, -2.f, 2.f, 62);
  const double grad_scale = 0.5;
  const std::vector<double> yd(y.begin(), y.end());
  auto loss = [&](const std::vector<double>& v) {
    return grad_scale * anycl::reference::mse(v.data(), t.data(), rows, width, 1.0, nullptr).loss_sum;
  };
  std::vector<float> fd(yd.size());
  const double h = 1e-5;
  for (size_t i = 0; i < yd.size(); ++i) {
    auto p = yd, m = yd;
    p[i] += h, m[i] -= h;
    fd[i] = float((loss(p) - loss(m)) / (2 * h));
  }
  const Run got = run_device(y, t, rows, width, float(grad_scale), 0, true);
  anycl::test::check_close(got.grad, fd, 1e-6, 1e-4, "mse gradient vs finite differences");
}

TEST_CASE("mse without a gradient writes only the metrics slot") {
  const size_t rows = 40, width = 3;
  const auto y = anycl::test::random_floats(rows * width, -1.f, 1.f, 71);
  const auto t = anycl::test::random_floats(rows * width, -1.f, 1.f, 72);
  const Run got = run_device(y, t, rows, width, 1.f, 3, false);
  for (float g : got.grad) CHECK(std::isnan(g));
  CHECK(got.outputs == y);
  check_metrics(got.metrics, 3, anycl::reference::mse(y.data(), t.data(), rows, width, 1.0, nullptr));
}

TEST_CASE("losses describe their targets and metric and refuse misuse") {
  auto& rt = anycl::test::runtime();
  const auto xent = anycl::make_loss(rt, "softmax_cross_entropy");
  CHECK(xent->name() == "softmax_cross_entropy");
  CHECK(xent->target_dtype() == anycl::DType::i32);
  CHECK(xent->target_width(10) == 1);
  CHECK(xent->metric_name() == "accuracy");
  CHECK(xent->predicts_classes());
  const auto mse = anycl::make_loss(rt, "mse");
  CHECK(mse->target_dtype() == anycl::DType::f32);
  CHECK(mse->target_width(3) == 3);
  CHECK(mse->metric_name() == "mae");
  CHECK_FALSE(mse->predicts_classes());
  CHECK_THROWS_WITH_AS(anycl::make_loss(rt, "hinge"), doctest::Contains("known: softmax_cross_entropy, mse"),
                       anycl::ValidationError);

  anycl::Tensor y(rt, {4, 3}), wrong(rt, {3, 4});
  const auto small = float_buffer(rt, std::vector<float>(5, 0.f));
  const auto enough = float_buffer(rt, std::vector<float>(12, 0.f));
  auto metrics = float_buffer(rt, std::vector<float>(2 * kSlots, kSentinel));
  CHECK_THROWS_AS(mse->run(y, {nullptr, 0}, nullptr, 1.f, metrics, 0), anycl::ValidationError);
  CHECK_THROWS_AS(mse->run(y, {&small, 0}, nullptr, 1.f, metrics, 0), anycl::ValidationError);
  CHECK_THROWS_AS(mse->run(y, {&enough, 1}, nullptr, 1.f, metrics, 0), anycl::ValidationError);
  CHECK_THROWS_AS(mse->run(y, {&enough, 0}, &wrong, 1.f, metrics, 0), anycl::ValidationError);
  CHECK_THROWS_AS(mse->run(y, {&enough, 0}, nullptr, 1.f, metrics, kSlots), anycl::ValidationError);
}

TEST_CASE("a regression model with the mse loss learns a smooth function of float features") {
  // y = (sin(2x0) + x1², x0·x1) on [-1, 1]²: Dense(32, tanh) → Dense(2), Adam, full-batch steps
  // written against the public API alone (forward, loss run, backward, optimizer step).
  auto& rt = anycl::test::runtime();
  const size_t rows = 256;
  const auto x = anycl::test::random_floats(rows * 2, -1.f, 1.f, 81);
  std::vector<float> t(rows * 2);
  for (size_t r = 0; r < rows; ++r) {
    const float a = x[2 * r], b = x[2 * r + 1];
    t[2 * r] = std::sin(2.f * a) + b * b;
    t[2 * r + 1] = a * b;
  }
  anycl::Sequential model(2);
  model.dense(32, anycl::Activation::tanh).dense(2).set_loss("mse");
  model.build(rt, rows);
  model.initialize(3);
  auto loss = anycl::make_loss(rt, model.loss());
  REQUIRE(loss->target_width(model.output_features()) == 2);
  auto optimizer = anycl::make_optimizer(rt, model.parameter_count(), {"adam", 0.02f});
  const auto xt = anycl::Tensor::from_host(rt, {rows, 2}, x);
  const auto targets = float_buffer(rt, t);
  anycl::Tensor grad(rt, {rows, 2});
  auto metrics = float_buffer(rt, std::vector<float>(2 * kSlots, 0.f));
  anycl::StepContext ctx;
  ctx.training = true;
  std::vector<float> first, last;
  for (uint32_t step = 0; step < 300; ++step) {
    ctx.step = step;
    const anycl::Tensor out = model.forward(xt, ctx);
    loss->run(out, {&targets, 0}, &grad, 1.f / float(rows), metrics, 0);
    model.backward(grad, ctx);
    optimizer->step(model.parameters(), model.gradients());
    if (step == 0) first = read_metrics(rt, metrics);
  }
  last = read_metrics(rt, metrics);
  const double mse_first = first[0] / rows, mse_last = last[0] / rows;
  CAPTURE(mse_first);
  CAPTURE(mse_last);
  CHECK(mse_last < 0.01);
  CHECK(mse_last < mse_first / 20);
  CHECK(last[1] / rows < 0.1);  // mean absolute error
}
