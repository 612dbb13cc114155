// Fused softmax + cross-entropy against tests/reference/softmax_xent.hpp: loss sum and correct
// count in the chosen metrics slot only, the gradient against finite differences, extreme logits.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <anycl/error.hpp>

#include <cmath>
#include <random>

#include "helpers.hpp"
#include "ops/softmax_xent.hpp"
#include "reference/softmax_xent.hpp"

namespace compute = anycl::compute;

namespace {

constexpr float kSentinel = -777.f;
constexpr size_t kSlots = 4;

anycl::DeviceBuffer int_buffer(anycl::Runtime& rt, const std::vector<int>& v) {
  return anycl::test::device_copy(rt, v);
}

anycl::DeviceBuffer sentinel_metrics(anycl::Runtime& rt) {
  return anycl::test::device_copy(rt, std::vector<float>(2 * kSlots, kSentinel));
}

std::vector<float> read_metrics(anycl::Runtime&, const anycl::DeviceBuffer& b) {
  return anycl::test::read_back<float>(b, 2 * kSlots);
}

std::vector<int> random_labels(size_t n, size_t classes, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(0, int(classes) - 1);
  std::vector<int> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

struct Run {
  std::vector<float> dlogits;  // the (rows, classes) view
  std::vector<float> metrics;  // all slots
};

// Runs the kernel with logits, labels and dlogits all at non-zero offsets, dlogits NaN-poisoned.
Run run_device(const std::vector<float>& logits, const std::vector<int>& labels, size_t rows, size_t classes,
               float grad_scale, size_t slot) {
  auto& rt = anycl::test::runtime();
  anycl::SoftmaxCrossEntropy op(rt);
  anycl::Tensor z_all(rt, {rows + 3, classes}), dz_all(rt, {rows + 2, classes});
  z_all.fill(50.f);  // a neighbour row read by mistake would change the loss
  dz_all.fill(std::nanf(""));
  anycl::Tensor z = z_all.rows(3, rows), dz = dz_all.rows(1, rows);
  z.upload(logits);
  std::vector<int> label_buf(5, 0);
  label_buf.insert(label_buf.end(), labels.begin(), labels.end());
  const auto lb = int_buffer(rt, label_buf);
  auto metrics = sentinel_metrics(rt);
  op.run(z, {&lb, 5}, &dz, grad_scale, metrics, slot);
  return {dz.download(), read_metrics(rt, metrics)};
}

void check_metrics(const std::vector<float>& got, size_t slot, const anycl::reference::XentMetrics& ref,
                   const std::string& what) {
  for (size_t i = 0; i < got.size(); ++i)
    if (i / 2 != slot) CHECK_MESSAGE(got[i] == kSentinel, what, ": metrics[", i, "] touched");
  anycl::test::check_close({got[2 * slot]}, {float(ref.loss_sum)}, 1e-4, 1e-5, what + " loss sum");
  CHECK_MESSAGE(got[2 * slot + 1] == float(ref.correct), what, " correct count");
}

}  // namespace

TEST_CASE("softmax_xent matches the reference in gradient and loss sum and correct count") {
  unsigned seed = 1;
  for (size_t classes : {1u, 10u, 47u})
    for (size_t rows : {1u, 7u, 65u, 257u, 1000u, 1025u}) {
      const auto logits = anycl::test::random_floats(rows * classes, -5.f, 5.f, seed++);
      const auto labels = random_labels(rows, classes, seed++);
      const float grad_scale = 1.0f / float(rows);
      const size_t slot = seed % kSlots;
      const Run got = run_device(logits, labels, rows, classes, grad_scale, slot);
      std::vector<float> ref_grad(rows * classes);
      const auto ref = anycl::reference::softmax_xent(logits.data(), labels.data(), rows, classes, grad_scale,
                                                      ref_grad.data());
      const std::string what = fmt::format("softmax_xent rows {} classes {}", rows, classes);
      anycl::test::check_close(got.dlogits, ref_grad, 1e-7, 1e-5, what + " dlogits");
      check_metrics(got.metrics, slot, ref, what);
    }
}

// d/dz of grad_scale·Σ_rows loss is exactly dlogits; central differences in double.
TEST_CASE("softmax_xent gradient agrees with finite differences of the summed loss") {
  const size_t rows = 5, classes = 7;
  const auto logits = anycl::test::random_floats(rows * classes, -3.f, 3.f, 21);
  const auto labels = random_labels(rows, classes, 22);
  const double grad_scale = 0.5;
  const std::vector<double> zd(logits.begin(), logits.end());
  auto loss = [&](const std::vector<double>& z) {
    return grad_scale *
           anycl::reference::softmax_xent(z.data(), labels.data(), rows, classes, 1.0, nullptr).loss_sum;
  };
  std::vector<float> fd(zd.size());
  const double h = 1e-5;
  for (size_t i = 0; i < zd.size(); ++i) {
    auto zp = zd, zm = zd;
    zp[i] += h, zm[i] -= h;
    fd[i] = float((loss(zp) - loss(zm)) / (2 * h));
  }
  const Run got = run_device(logits, labels, rows, classes, float(grad_scale), 0);
  anycl::test::check_close(got.dlogits, fd, 1e-6, 1e-4, "dlogits vs finite differences");
}

TEST_CASE("softmax_xent without a gradient writes only the metrics slot") {
  auto& rt = anycl::test::runtime();
  anycl::SoftmaxCrossEntropy op(rt);
  const size_t rows = 300, classes = 10;
  const auto logits = anycl::test::random_floats(rows * classes, -4.f, 4.f, 31);
  const auto labels = random_labels(rows, classes, 32);
  auto z = anycl::Tensor::from_host(rt, {rows, classes}, logits);
  const auto lb = int_buffer(rt, labels);
  auto metrics = sentinel_metrics(rt);
  op.run(z, {&lb, 0}, nullptr, 1.f, metrics, 3);
  anycl::test::check_close(z.download(), logits, 0, 0, "logits (the buffer bound as dlogits) untouched");
  check_metrics(read_metrics(rt, metrics), 3,
                anycl::reference::softmax_xent(logits.data(), labels.data(), rows, classes, 1.0, nullptr),
                "eval only");
}

// Beyond 4 rows per work-item of one group the batch is split over groups whose partial sums a
// second kernel adds in group order: the same sums as the reference, bit-identical on a rerun.
TEST_CASE("softmax_xent over many work-groups matches the reference and reruns bit-identically") {
  auto& rt = anycl::test::runtime();
  anycl::SoftmaxCrossEntropy op(rt);
  unsigned seed = 51;
  for (size_t rows : {2049u, 4500u}) {
    const size_t classes = 10;
    const auto logits = anycl::test::random_floats(rows * classes, -6.f, 6.f, seed++);
    const auto labels = random_labels(rows, classes, seed++);
    const auto ref =
        anycl::reference::softmax_xent(logits.data(), labels.data(), rows, classes, 1.0, nullptr);
    const std::string what = fmt::format("softmax_xent {} rows, no gradient", rows);
    auto z = anycl::Tensor::from_host(rt, {rows, classes}, logits);
    const auto lb = int_buffer(rt, labels);
    auto metrics = sentinel_metrics(rt);
    op.run(z, {&lb, 0}, nullptr, 1.f, metrics, 2);
    const auto first = read_metrics(rt, metrics);
    check_metrics(first, 2, ref, what);
    op.run(z, {&lb, 0}, nullptr, 1.f, metrics, 2);
    CHECK_MESSAGE(read_metrics(rt, metrics) == first, what, ": a rerun differs");
    // With the gradient, through views at offsets.
    const Run got = run_device(logits, labels, rows, classes, 0.25f, 1);
    std::vector<float> ref_grad(rows * classes);
    anycl::reference::softmax_xent(logits.data(), labels.data(), rows, classes, 0.25f, ref_grad.data());
    anycl::test::check_close(got.dlogits, ref_grad, 1e-7, 1e-5, what + " dlogits");
    check_metrics(got.metrics, 1, ref, fmt::format("softmax_xent {} rows with gradient", rows));
  }
}

TEST_CASE("softmax_xent stays finite for extreme logits of plus or minus 80") {
  const size_t rows = 40, classes = 10;
  auto logits = anycl::test::random_floats(rows * classes, -80.f, 80.f, 41);
  for (size_t i = 0; i < logits.size(); i += 3) logits[i] = (i / 3) % 2 ? 80.f : -80.f;
  auto labels = random_labels(rows, classes, 42);
  labels[0] = 1, logits[0] = 80.f, logits[1] = -80.f;  // the label's logit 160 below the max
  const Run got = run_device(logits, labels, rows, classes, 1.f, 1);
  for (float v : got.dlogits) REQUIRE(std::isfinite(v));
  REQUIRE(std::isfinite(got.metrics[2]));
  std::vector<float> ref_grad(rows * classes);
  const auto ref =
      anycl::reference::softmax_xent(logits.data(), labels.data(), rows, classes, 1.0, ref_grad.data());
  CHECK(ref.loss_sum > 160.0);
  anycl::test::check_close(got.dlogits, ref_grad, 1e-6, 1e-5, "extreme dlogits");
  check_metrics(got.metrics, 1, ref, "extreme");
}

TEST_CASE("softmax_xent rejects missing labels and a slot past the buffer and misfit shapes") {
  auto& rt = anycl::test::runtime();
  anycl::SoftmaxCrossEntropy op(rt);
  anycl::Tensor z(rt, {4, 3}), dz(rt, {3, 4});
  const auto lb = int_buffer(rt, {0, 1, 2, 0});
  auto metrics = sentinel_metrics(rt);
  CHECK_THROWS_AS(op.run(z, {nullptr, 0}, nullptr, 1.f, metrics, 0), anycl::ValidationError);
  CHECK_THROWS_WITH_AS(op.run(z, {&lb, 0}, nullptr, 1.f, metrics, kSlots), doctest::Contains("slot"),
                       anycl::ValidationError);
  CHECK_THROWS_WITH_AS(op.run(z, {&lb, 0}, &dz, 1.f, metrics, 0), doctest::Contains("(4, 3)"),
                       anycl::ValidationError);
}
