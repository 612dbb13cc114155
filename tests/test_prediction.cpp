// Prediction without labels: predict() gives the evaluator's probabilities bit for bit on
// MNIST-like bytes, predict_outputs() the raw outputs, and class_report() the CLI's confusion
// matrix. Also: more than 256 classes train (int32 class indices end to end), and the C API's
// cached predictor gives a row the same bits whether it comes alone or in a batch.
#include <doctest/doctest.h>

#include <anycl/anycl.h>
#include <anycl/data/dataset.hpp>
#include <anycl/error.hpp>
#include <anycl/train/prediction.hpp>
#include <anycl/train/trainer.hpp>

#include <cmath>
#include <cstring>
#include <random>

#include "data_files.hpp"
#include "helpers.hpp"

using anycl::ValidationError;

namespace {
// `count` random 8x8 byte images with labels in [0, classes).
anycl::data::Dataset mnist_like(size_t count, size_t classes, uint32_t seed) {
  anycl::data::Dataset d;
  d.count = count, d.rows = 8, d.cols = 8, d.num_classes = classes;
  d.pixels = anycl::test::random_bytes(count * 64, seed);
  for (size_t i = 0; i < count; ++i) d.labels.push_back(uint8_t(i % classes));
  return d;
}
}  // namespace

TEST_CASE("predict gives the evaluator's probabilities bit for bit, without labels") {
  auto& rt = anycl::test::runtime();
  anycl::Sequential model(64);
  model.dense(32, anycl::Activation::relu).dropout(0.5f).dense(10);
  model.build(rt, 16);  // 70 samples: four full batches and a partial one
  model.initialize(3);
  const auto host = mnist_like(70, 10, 5);
  const anycl::DeviceDataset data(rt, host);
  anycl::Evaluator evaluator(model, model.max_batch());
  const std::vector<float> expected = evaluator.probabilities(data, 0, data.count());
  const std::vector<float> p = anycl::predict(model, host.normalized(0, host.count));
  REQUIRE(p.size() == 70 * 10);
  CHECK(p == expected);
  double row_sum = 0;
  for (size_t c = 0; c < 10; ++c) row_sum += p[c];
  CHECK(row_sum == doctest::Approx(1.0).epsilon(1e-5));

  // The raw outputs: softmax of them on the host is the probability (to rounding).
  const std::vector<float> z = anycl::predict_outputs(model, host.normalized(0, 3));
  REQUIRE(z.size() == 30);
  for (size_t r = 0; r < 3; ++r) {
    double sum = 0;
    for (size_t c = 0; c < 10; ++c) sum += std::exp(double(z[r * 10 + c]));
    for (size_t c = 0; c < 10; ++c)
      CHECK(p[r * 10 + c] == doctest::Approx(std::exp(double(z[r * 10 + c])) / sum).epsilon(1e-5));
  }
  CHECK(anycl::predict(model, {}).empty());
  CHECK_MESSAGE(anycl::test::contains_all(anycl::test::thrown_message<ValidationError>(
                                              [&] { anycl::predict(model, std::vector<float>(65)); }),
                                          {"65 values", "64 input features"}),
                "a ragged x is refused");
}

TEST_CASE("class_report counts the confusion matrix and per-class accuracy") {
  const std::vector<int32_t> labels = {0, 0, 1, 1, 1, 2};
  const std::vector<size_t> predicted = {0, 1, 1, 1, 0, 2};
  const anycl::ClassReport r = anycl::class_report(labels, predicted, 4);
  CHECK(r.confusion == std::vector<size_t>{1, 1, 0, 0, 1, 2, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0});
  CHECK(r.totals == std::vector<size_t>{2, 3, 1, 0});
  CHECK(r.accuracy(0) == 0.5);
  CHECK(r.accuracy(1) == doctest::Approx(2.0 / 3.0));
  CHECK(r.accuracy(3) == 0.0);
  CHECK(r.overall_accuracy() == doctest::Approx(4.0 / 6.0));
  CHECK(anycl::predicted_classes({0.1f, 0.7f, 0.2f, 0.5f, 0.2f, 0.3f}, 3) == std::vector<size_t>{1, 0});
  CHECK_THROWS_AS(anycl::class_report({0, 4}, {0, 0}, 4), ValidationError);
  CHECK_THROWS_AS(anycl::class_report({0}, {0, 0}, 4), ValidationError);
}

TEST_CASE("more than 256 classes train from float features through the host Dataset") {
  auto& rt = anycl::test::runtime();
  const size_t k = 300, d = 16, per_class = 3;
  // One random centre per class, a few points close to it.
  std::mt19937 rng(9);
  std::uniform_real_distribution<float> centre(-1.f, 1.f);
  std::normal_distribution<float> noise(0.f, 0.02f);
  std::vector<float> centres(k * d), x;
  for (auto& c : centres) c = centre(rng);
  std::vector<int32_t> y;
  for (size_t i = 0; i < per_class; ++i)
    for (size_t c = 0; c < k; ++c) {
      for (size_t j = 0; j < d; ++j) x.push_back(centres[c * d + j] + noise(rng));
      y.push_back(int32_t(c));
    }
  const auto train = anycl::data::Dataset::from_features(x, y, d, k);
  anycl::Sequential model(d);
  model.dense(k);
  model.build(rt, 64);
  model.initialize(1);
  auto optimizer = anycl::make_optimizer(rt, model.parameter_count(), {"adam", 0.02f});
  anycl::TrainOptions options;
  options.epochs = 40, options.batch = 64;
  anycl::Trainer trainer(model, *optimizer, options);
  trainer.fit(train);
  const anycl::EvalStats stats = trainer.evaluate(train);
  MESSAGE("300 classes: training accuracy ", stats.accuracy, ", loss ", stats.loss);
  CHECK(stats.accuracy >= 0.9);
  const auto predicted = anycl::predicted_classes(anycl::predict(model, x), k);
  CHECK(anycl::class_report(y, predicted, k).overall_accuracy() == doctest::Approx(stats.accuracy));
}

namespace {

// Bit for bit on PoCL, where dense_row_forward sums in the order CLBlast's kernels do as PoCL compiles
// them (and a 37-row GEMM as a 256-row one); another compiler (Intel's runtime) may vectorise or
// contract the batch GEMM otherwise: there the rows agree within 1e-5 relative.
bool same_rows(const float* a, const float* b, size_t n) {
  static const bool pocl =
      anycl::test::runtime().info().platform_name.find("Portable Computing Language") != std::string::npos;
  for (size_t i = 0; i < n; ++i)
    if (pocl ? std::memcmp(&a[i], &b[i], sizeof(float)) != 0
             : !(std::fabs(a[i] - b[i]) <= 1e-5f * (1.f + std::fabs(b[i]))))
      return false;
  return true;
}

}  // namespace

TEST_CASE("anycl_predict one row at a time gives the rows of one many-row call (bit for bit on PoCL)") {
  // The reference MLP's shapes: a 1-row GEMM may run another CLBlast kernel than a 37-row one,
  // and the C API keeps one Predictor per model (built for the largest batch seen so far).
  anycl_runtime* rt = nullptr;
  REQUIRE(anycl_runtime_create("", &rt) == ANYCL_OK);
  anycl_model_options mo;
  anycl_model_options_init(&mo);
  mo.input_shape[0] = 784;
  mo.outputs = 10;
  anycl_model* model = nullptr;
  REQUIRE(anycl_model_create(&mo, &model) == ANYCL_OK);
  const size_t n = 300, d = 784, k = 10;  // 300 rows: two device batches (256 + 44) in one call
  const std::vector<float> x = anycl::test::random_floats(n * d, 0.f, 1.f, 11);
  std::vector<int32_t> labels(64);
  for (size_t i = 0; i < labels.size(); ++i) labels[i] = int32_t(i % k);
  anycl_dataset* data = nullptr;
  REQUIRE(anycl_dataset_create_classes(x.data(), labels.size(), d, labels.data(), k, &data) == ANYCL_OK);
  anycl_train_options to;
  anycl_train_options_init(&to);
  to.epochs = 1, to.batch = 32;
  REQUIRE_MESSAGE(anycl_train(model, rt, data, nullptr, &to, nullptr, 0, nullptr, nullptr) == ANYCL_OK,
                  anycl_last_error());

  auto one_by_one = [&](size_t rows) {
    std::vector<float> y(rows * k);
    for (size_t r = 0; r < rows; ++r)
      REQUIRE(anycl_predict(model, rt, &x[r * d], 1, &y[r * k], k) == ANYCL_OK);
    return y;
  };
  const std::vector<float> first = one_by_one(37);  // the model built for batch 1
  std::vector<float> all(n * k);
  REQUIRE(anycl_predict(model, rt, x.data(), n, all.data(), all.size()) == ANYCL_OK);  // rebuilt for 256
  CHECK(same_rows(first.data(), all.data(), first.size()));
  CHECK(one_by_one(37) == first);  // batch 1 on the model built for 256
  std::vector<float> middle(37 * k);
  REQUIRE(anycl_predict(model, rt, &x[100 * d], 37, middle.data(), middle.size()) == ANYCL_OK);
  CHECK(same_rows(middle.data(), all.data() + 100 * k, middle.size()));
  anycl_dataset_destroy(data);
  anycl_model_destroy(model);
  anycl_runtime_destroy(rt);
}

TEST_CASE("a one-row Dense at inference (fused kernel) gives that row of a batch (bit for bit on PoCL)") {
  // Odd widths (the scalar tail of dense_row_forward), a narrow and a wide k, each activation
  // (tanh and sigmoid where the width is whole vectors: bias_activation_forward's vector and scalar
  // paths may differ there by an ulp, whatever the product).
  auto& rt = anycl::test::runtime();
  struct Case {
    size_t in, units;
    anycl::Activation act;
  };
  for (const Case c : {Case{5, 37, anycl::Activation::relu}, Case{300, 10, anycl::Activation::linear},
                       Case{64, 48, anycl::Activation::tanh}, Case{33, 16, anycl::Activation::sigmoid},
                       Case{7, 19, anycl::Activation::leaky_relu}, Case{21, 16, anycl::Activation::elu},
                       Case{40, 32, anycl::Activation::gelu}}) {
    CAPTURE(c.in);
    CAPTURE(c.units);
    anycl::Sequential model(c.in);
    model.dense(c.units, c.act).dense(3);
    model.build(rt, 9);
    model.initialize(7);
    const std::vector<float> x = anycl::test::random_floats(9 * c.in, -2.f, 2.f, 5);
    const std::vector<float> all = anycl::predict_outputs(model, x);
    for (size_t r = 0; r < 9; ++r) {
      const std::vector<float> one =
          anycl::predict_outputs(model, std::vector<float>(x.begin() + r * c.in, x.begin() + (r + 1) * c.in));
      CHECK(same_rows(one.data(), all.data() + r * 3, one.size()));
    }
  }
}
