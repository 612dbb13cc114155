// Mean absolute error, Huber and binary cross-entropy from logits (cl_kernels/elementwise_loss.cl)
// against tests/reference/elementwise_loss.hpp: loss and metric sums in the chosen slot only, the
// gradient against the reference and finite differences, extreme logits, the sigmoid predictions,
// and make_loss() / loss_info() describing every loss alike.
#include <doctest/doctest.h>
#include <anycl/error.hpp>
#include <anycl/losses/loss.hpp>

#include <cmath>
#include <string>

#include "helpers.hpp"
#include "reference/elementwise_loss.hpp"

namespace {

constexpr float kSentinel = -777.f;
constexpr size_t kSlots = 4;
const char* const kLosses[] = {"mae", "huber", "binary_crossentropy"};

struct Run {
  std::vector<float> grad, outputs, metrics;
};

// Outputs, targets and gradient all at non-zero offsets; the gradient NaN-poisoned, the rows around
// the outputs set to 50 (a neighbour read by mistake changes the loss).
Run run_device(const std::string& name, const std::vector<float>& y, const std::vector<float>& t, size_t rows,
               size_t width, float grad_scale, size_t slot, bool with_grad) {
  auto& rt = anycl::test::runtime();
  auto loss = anycl::make_loss(rt, name);
  anycl::Tensor y_all(rt, {rows + 4, width}), g_all(rt, {rows + 2, width});
  y_all.fill(50.f);
  g_all.fill(std::nanf(""));
  anycl::Tensor out = y_all.rows(3, rows), grad = g_all.rows(1, rows);
  out.upload(y);
  std::vector<float> target_buf(7, 50.f);
  target_buf.insert(target_buf.end(), t.begin(), t.end());
  const auto tb = anycl::test::device_copy(rt, target_buf);
  auto metrics = anycl::test::device_copy(rt, std::vector<float>(2 * kSlots, kSentinel));
  loss->run(out, {&tb, 7}, with_grad ? &grad : nullptr, grad_scale, metrics, slot);
  return {grad.download(), out.download(), anycl::test::read_back<float>(metrics, 2 * kSlots)};
}

// Targets for `name`: 0/1 for binary cross-entropy (a few soft ones too, which Keras allows), values
// for the regression losses.
std::vector<float> targets_for(const std::string& name, size_t n, unsigned seed) {
  auto t = anycl::test::random_floats(n, -3.f, 3.f, seed);
  if (name == "binary_crossentropy")
    for (size_t i = 0; i < n; ++i) t[i] = i % 7 == 3 ? 0.25f : (t[i] > 0 ? 1.f : 0.f);
  return t;
}

void check_metrics(const std::vector<float>& got, size_t slot,
                   const anycl::reference::ElementwiseMetrics& ref) {
  for (size_t i = 0; i < got.size(); ++i)
    if (i / 2 != slot) CHECK_MESSAGE(got[i] == kSentinel, "metrics[", i, "] touched");
  anycl::test::check_close({got[2 * slot]}, {float(ref.loss_sum)}, 1e-5, 1e-5, "loss sum");
  anycl::test::check_close({got[2 * slot + 1]}, {float(ref.metric_sum)}, 1e-5, 1e-5, "metric sum");
}

}  // namespace

TEST_CASE("mae, huber and binary cross-entropy match the reference in gradient, loss sum and metric sum") {
  for (const std::string name : kLosses) {
    for (const auto& shape : {std::pair<size_t, size_t>{1, 1}, {7, 3}, {300, 10}, {513, 1}}) {
      const size_t rows = shape.first, width = shape.second;
      CAPTURE(name);
      CAPTURE(rows);
      CAPTURE(width);
      const auto y = anycl::test::random_floats(rows * width, -4.f, 4.f, unsigned(rows + width));
      const auto t = targets_for(name, rows * width, unsigned(rows * width + 1));
      const float scale = 1.f / float(rows);
      const Run got = run_device(name, y, t, rows, width, scale, 2, true);
      std::vector<float> ref_grad(rows * width);
      const auto ref = anycl::reference::elementwise_loss(name, y.data(), t.data(), rows, width,
                                                          double(scale), ref_grad.data());
      anycl::test::check_close(got.grad, ref_grad, 1e-7, 1e-5, name + " gradient");
      check_metrics(got.metrics, 2, ref);
    }
  }
}

TEST_CASE("huber and binary cross-entropy gradients agree with finite differences of the summed loss") {
  // (MAE's derivative is the sign: its finite differences are the reference's own, checked above.)
  for (const std::string name : {"huber", "binary_crossentropy", "mae"}) {
    CAPTURE(name);
    const size_t rows = 5, width = 4;
    const auto y = anycl::test::random_floats(rows * width, -2.5f, 2.5f, 61);
    const auto t = targets_for(name, rows * width, 62);
    const double grad_scale = 0.5;
    const std::vector<double> yd(y.begin(), y.end());
    auto loss = [&](const std::vector<double>& v) {
      return grad_scale *
             anycl::reference::elementwise_loss(name, v.data(), t.data(), rows, width, 1.0, nullptr).loss_sum;
    };
    std::vector<float> fd(yd.size());
    const double h = 1e-5;
    for (size_t i = 0; i < yd.size(); ++i) {
      auto p = yd, m = yd;
      p[i] += h, m[i] -= h;
      fd[i] = float((loss(p) - loss(m)) / (2 * h));
    }
    const Run got = run_device(name, y, t, rows, width, float(grad_scale), 0, true);
    anycl::test::check_close(got.grad, fd, 1e-6, 1e-4, name + " gradient vs finite differences");
  }
}

TEST_CASE("binary cross-entropy from logits stays finite and exact for extreme logits") {
  // max(z,0) − z·t + log1p(exp(−|z|)): no exp overflows, no log(0); the sigmoid form never divides by ∞.
  const std::vector<float> z = {1e4f, -1e4f, 1e4f, -1e4f, 90.f, -90.f, 0.f, 0.f};
  const std::vector<float> t = {0.f, 1.f, 1.f, 0.f, 0.f, 1.f, 1.f, 0.f};
  const std::vector<float> want_loss = {
      1e4f, 1e4f, 0.f, 0.f, 90.f, 90.f, float(std::log(2.0)), float(std::log(2.0))};
  const std::vector<float> want_grad = {1.f, -1.f, 0.f, 0.f, 1.f, -1.f, -0.5f, 0.5f};
  double loss_sum = 0;
  for (float l : want_loss) loss_sum += l;
  const Run got = run_device("binary_crossentropy", z, t, z.size(), 1, 1.f, 1, true);
  anycl::test::check_close(got.grad, want_grad, 1e-7, 1e-6, "gradient at extreme logits");
  anycl::test::check_close({got.metrics[2]}, {float(loss_sum)}, 1e-6, 1e-6, "loss at extreme logits");
  // Binary accuracy: z > 0 predicts 1 (p > 0.5); z = 0 predicts 0, as Keras' threshold does.
  CHECK(got.metrics[3] == 3.f);  // rows 2, 3 and 7
}

TEST_CASE("without a gradient the losses write only the metrics slot") {
  for (const std::string name : kLosses) {
    CAPTURE(name);
    const size_t rows = 40, width = 3;
    const auto y = anycl::test::random_floats(rows * width, -2.f, 2.f, 71);
    const auto t = targets_for(name, rows * width, 72);
    const Run got = run_device(name, y, t, rows, width, 1.f, 3, false);
    for (float g : got.grad) CHECK(std::isnan(g));
    CHECK(got.outputs == y);
    check_metrics(got.metrics, 3,
                  anycl::reference::elementwise_loss(name, y.data(), t.data(), rows, width, 1.0, nullptr));
  }
}

TEST_CASE(
    "binary cross-entropy predicts the sigmoid of each output - the regression losses have no "
    "probabilities") {
  auto& rt = anycl::test::runtime();
  auto bce = anycl::make_loss(rt, "binary_crossentropy");
  const size_t rows = 37, width = 3;
  auto z = anycl::test::random_floats(rows * width, -8.f, 8.f, 81);
  z[0] = 1e4f, z[1] = -1e4f, z[2] = 0.f;
  anycl::Tensor z_all(rt, {rows + 2, width}), p_all(rt, {rows + 3, width});
  z_all.fill(50.f);
  p_all.fill(std::nanf(""));
  anycl::Tensor logits = z_all.rows(1, rows), probs = p_all.rows(2, rows);
  logits.upload(z);
  bce->predictions(logits, probs);
  const std::vector<float> all = p_all.download();
  std::vector<float> want(rows * width);
  for (size_t i = 0; i < want.size(); ++i) want[i] = float(anycl::reference::sigmoid(z[i]));
  anycl::test::check_close(probs.download(), want, 1e-7, 1e-6, "sigmoid predictions");
  for (size_t i = 0; i < 2 * width; ++i) CHECK(std::isnan(all[i]));  // rows before the output untouched
  CHECK(std::isnan(all[(rows + 2) * width]));                        // and the row after
  anycl::Tensor wrong(rt, {width, rows});
  CHECK_THROWS_AS(bce->predictions(logits, wrong), anycl::ValidationError);
  for (const char* name : {"mae", "huber", "mse"})
    CHECK_THROWS_WITH_AS(anycl::make_loss(rt, name)->predictions(logits, probs),
                         doctest::Contains("raw outputs"), anycl::ValidationError);
}

TEST_CASE("every loss describes its targets, metric and predictions, as loss_info() does without a device") {
  auto& rt = anycl::test::runtime();
  for (const std::string& name : anycl::loss_names()) {
    CAPTURE(name);
    const auto loss = anycl::make_loss(rt, name);
    const anycl::LossInfo& info = anycl::loss_info(name);
    CHECK(loss->name() == name);
    CHECK(info.name == name);
    CHECK(info.class_targets == (loss->target_dtype() == anycl::DType::i32));
    CHECK(loss->target_width(5) == (info.class_targets ? 1u : 5u));
    CHECK(info.metric == loss->metric_name());
    CHECK(info.probabilities == loss->predicts_classes());
  }
  CHECK(anycl::loss_info("binary_crossentropy").metric == "accuracy");
  CHECK(anycl::loss_info("huber").metric == "mae");
  CHECK_THROWS_WITH_AS(anycl::loss_info("hinge"), doctest::Contains("binary_crossentropy"),
                       anycl::ValidationError);

  auto mae = anycl::make_loss(rt, "mae");
  anycl::Tensor y(rt, {4, 3}), wrong(rt, {3, 4});
  const auto small = anycl::test::device_copy(rt, std::vector<float>(5, 0.f));
  const auto enough = anycl::test::device_copy(rt, std::vector<float>(12, 0.f));
  auto metrics = anycl::test::device_copy(rt, std::vector<float>(2 * kSlots, kSentinel));
  CHECK_THROWS_AS(mae->run(y, {nullptr, 0}, nullptr, 1.f, metrics, 0), anycl::ValidationError);
  CHECK_THROWS_AS(mae->run(y, {&small, 0}, nullptr, 1.f, metrics, 0), anycl::ValidationError);
  CHECK_THROWS_AS(mae->run(y, {&enough, 1}, nullptr, 1.f, metrics, 0), anycl::ValidationError);
  CHECK_THROWS_AS(mae->run(y, {&enough, 0}, &wrong, 1.f, metrics, 0), anycl::ValidationError);
  CHECK_THROWS_AS(mae->run(y, {&enough, 0}, nullptr, 1.f, metrics, kSlots), anycl::ValidationError);
}
