// An application's own data on the device: float features with int32/uint32 class indices or float
// targets, every validation error naming the first bad index, the host Dataset's float forms, and
// the training loop refusing targets its loss cannot use and fitting float targets with MSE.
#include <doctest/doctest.h>

#include <anycl/data/dataset.hpp>
#include <anycl/error.hpp>
#include <anycl/train/device_dataset.hpp>
#include <anycl/train/trainer.hpp>

#include <cmath>
#include <numeric>

#include <anycl/train/prediction.hpp>
#include <random>
#include "data_files.hpp"
#include "helpers.hpp"

using anycl::DeviceDataset;
using anycl::DType;
using anycl::ValidationError;
using anycl::test::contains_all;
using anycl::test::thrown_message;

#define CHECK_WORDS(msg, ...) CHECK_MESSAGE(contains_all(msg, {__VA_ARGS__}), msg)

namespace {
template <typename V>
std::vector<V> read_back(anycl::Runtime&, const anycl::DeviceBuffer& b, size_t n) {
  return anycl::test::read_back<V>(b, n);
}
}  // namespace

TEST_CASE("from_features stores float features and int32 class indices as given") {
  auto& rt = anycl::test::runtime();
  const std::vector<float> x = {0.5f, -1.f, 2.f, 3.25f, -0.f, 7.f};
  const std::vector<int32_t> y = {2, 0, 299};
  const DeviceDataset ds = DeviceDataset::from_features(rt, x, y, 2, 300);
  CHECK(ds.count() == 3);
  CHECK(ds.features() == 2);
  CHECK(ds.num_classes() == 300);
  CHECK(ds.feature_type() == DType::f32);
  CHECK(ds.target_type() == DType::i32);
  CHECK(ds.has_classes());
  CHECK(ds.target_width() == 1);
  CHECK(ds.host_labels() == y);
  CHECK(read_back<float>(rt, ds.feature_buffer(), 6) == x);
  CHECK(read_back<int32_t>(rt, ds.target_buffer(), 3) == y);
  const std::vector<uint32_t> uy = {1, 0, 1};
  CHECK(DeviceDataset::from_features(rt, x, uy, 2, 2).host_labels() == std::vector<int32_t>{1, 0, 1});
}

TEST_CASE("from_targets stores float targets of any width") {
  auto& rt = anycl::test::runtime();
  const std::vector<float> x = {1, 2, 3, 4}, t = {0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f};
  const DeviceDataset ds = DeviceDataset::from_targets(rt, x, t, 2, 3);
  CHECK(ds.count() == 2);
  CHECK(ds.target_type() == DType::f32);
  CHECK_FALSE(ds.has_classes());
  CHECK(ds.target_width() == 3);
  CHECK(ds.num_classes() == 0);
  CHECK(ds.host_labels().empty());
  CHECK(read_back<float>(rt, ds.target_buffer(), 6) == t);
}

TEST_CASE("from_features and from_targets name what is wrong and the first bad index") {
  auto& rt = anycl::test::runtime();
  const std::vector<float> x6 = {0, 1, 2, 3, 4, 5};
  auto features = [&](const std::vector<float>& x, const std::vector<int32_t>& y, size_t d, size_t k) {
    return thrown_message<ValidationError>([&] { DeviceDataset::from_features(rt, x, y, d, k); });
  };
  CHECK_WORDS(features(x6, {0, 1, 5}, 2, 3), "from_features", "y[2] = 5", "[0, 3)");
  CHECK_WORDS(features(x6, {0, -1, 1}, 2, 3), "y[1] = -1", "[0, 3)");
  CHECK_WORDS(features(x6, {0, 1}, 2, 3), "3 samples", "2 labels");
  CHECK_WORDS(features(x6, {0, 1, 2}, 4, 3), "6 values", "d = 4");
  CHECK_WORDS(features(x6, {0, 1, 2}, 0, 3), "d (features per sample)");
  CHECK_WORDS(features(x6, {0, 0, 0}, 2, 0), "k (the number of classes)");
  CHECK_WORDS(features({}, {}, 2, 3), "x is empty");
  std::vector<float> bad = x6;
  bad[3] = std::nanf("");
  CHECK_WORDS(features(bad, {0, 1, 2}, 2, 3), "x[3] is nan", "replace");
  bad[3] = INFINITY;
  CHECK_WORDS(features(bad, {0, 1, 2}, 2, 3), "x[3] is inf");
  const std::vector<uint32_t> big = {0, 4000000000u, 1};
  CHECK_WORDS(thrown_message<ValidationError>([&] { DeviceDataset::from_features(rt, x6, big, 2, 3); }),
              "y[1] = 4000000000", "[0, 3)");
  auto targets = [&](const std::vector<float>& t, size_t outputs) {
    return thrown_message<ValidationError>([&] { DeviceDataset::from_targets(rt, x6, t, 2, outputs); });
  };
  CHECK_WORDS(targets({1, 2, 3, 4, 5}, 2), "from_targets", "3 × 2 = 6 values", "holds 5");
  CHECK_WORDS(targets({1, 2, 3}, 0), "outputs");
  CHECK_WORDS(targets({1, std::nanf(""), 3}, 1), "t[1] is nan");
}

TEST_CASE("a host Dataset of float features or targets uploads as the device forms do") {
  auto& rt = anycl::test::runtime();
  const std::vector<float> x = {1, 2, 3, 4, 5, 6};
  const auto host = anycl::data::Dataset::from_features(x, std::vector<int32_t>{0, 299, 7}, 2, 300);
  CHECK(host.features() == 2);
  CHECK(host.normalized(1, 2) == std::vector<float>{3, 4, 5, 6});
  const DeviceDataset ds(rt, host);
  CHECK(ds.feature_type() == DType::f32);
  CHECK(ds.target_type() == DType::i32);
  CHECK(read_back<int32_t>(rt, ds.target_buffer(), 3) == std::vector<int32_t>{0, 299, 7});
  const auto reg = anycl::data::Dataset::from_targets(x, {9, 8, 7}, 2, 1);
  CHECK(DeviceDataset(rt, reg).target_type() == DType::f32);
  // The first samples of each form (what the data-parallel speed probe uploads).
  const auto head = host.first(2);
  CHECK(head.count == 2);
  CHECK(head.values == std::vector<float>{1, 2, 3, 4});
  CHECK(head.classes == std::vector<int32_t>{0, 299});
  CHECK(head.pixels.empty());
  CHECK(reg.first(1).targets == std::vector<float>{9});
  CHECK_THROWS_AS(host.first(4), ValidationError);
  CHECK_WORDS(thrown_message<ValidationError>([&] {
                anycl::data::Dataset::from_features(x, std::vector<int32_t>{0, 1, 3}, 2, 3);
              }),
              "Dataset::from_features", "y[2] = 3");
  // A hand-filled Dataset whose vectors disagree with its counts, or whose labels pass num_classes.
  anycl::data::Dataset odd = host;
  odd.count = 4;
  CHECK_WORDS(thrown_message<ValidationError>([&] { DeviceDataset(rt, odd); }), "float features", "6 values");
  anycl::data::Dataset bytes;
  bytes.count = 2, bytes.rows = 1, bytes.cols = 2, bytes.num_classes = 3;
  bytes.pixels = {1, 2, 3, 4};
  bytes.labels = {1, 3};
  CHECK_WORDS(thrown_message<ValidationError>([&] { DeviceDataset(rt, bytes); }), "y[1] = 3", "[0, 3)");
  bytes.labels = {1, 2};
  CHECK(DeviceDataset(rt, bytes).feature_type() == DType::u8);
  CHECK(DeviceDataset(rt, bytes).target_type() == DType::u8);
}

TEST_CASE("the training loop refuses targets its loss cannot use, and fits float targets with mse") {
  auto& rt = anycl::test::runtime();
  anycl::Sequential model(2);
  model.dense(32, anycl::Activation::tanh).dense(1);
  model.build(rt, 32);
  model.initialize(1);
  auto optimizer = anycl::make_optimizer(rt, model.parameter_count(), {"adam", 0.01f});
  anycl::TrainOptions options;
  options.epochs = 150, options.batch = 32;
  // A smooth function of two float features: y = sin(2·x0) + x1²/2 on [-1, 1]².
  std::vector<float> x, t;
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  for (int i = 0; i < 256; ++i) {
    const float a = u(rng), b = u(rng);
    x.insert(x.end(), {a, b});
    t.push_back(std::sin(2 * a) + b * b / 2);
  }
  const auto data = DeviceDataset::from_targets(rt, x, t, 2, 1);
  {
    anycl::Trainer classes(model, *optimizer, options);  // the model's loss is softmax cross-entropy
    CHECK_WORDS(thrown_message<ValidationError>([&] { classes.fit(data); }), "float targets", "mse");
    CHECK_WORDS(thrown_message<ValidationError>([&] {
                  classes.train_on_batch(data, {0, 1});
                }),
                "float targets", "mse");
  }
  model.set_loss("mse");
  anycl::Trainer trainer(model, *optimizer, options);
  const auto history = trainer.fit(data);
  const double first = history.front().train_loss, last = history.back().train_loss;
  MESSAGE("mse ", first, " -> ", last, ", mae ", history.back().train_accuracy);
  CHECK(last < 0.01);
  CHECK(last < first / 20);
  // Prediction gives the raw outputs (no softmax) for a regression model.
  const std::vector<float> predicted = anycl::predict(model, x);
  REQUIRE(predicted.size() == t.size());
  double squared = 0;
  for (size_t i = 0; i < t.size(); ++i) squared += (predicted[i] - t[i]) * (predicted[i] - t[i]);
  CHECK(squared / double(t.size()) < 0.01);
  const anycl::DeviceDataset labels = DeviceDataset::from_features(rt, x, std::vector<int32_t>(256, 0), 2, 1);
  CHECK_WORDS(thrown_message<ValidationError>([&] { trainer.fit(labels); }), "mse", "class labels");
}

namespace {
struct Trained {
  std::vector<double> losses;
  std::vector<float> parameters;
};

anycl::ModelSpec small_spec() {
  anycl::Sequential m(64);
  m.dense(16, anycl::Activation::relu).dropout(0.2f).dense(10);
  return m.spec();
}

anycl::TrainOptions small_options() {
  anycl::TrainOptions o;
  o.epochs = 5, o.batch = 16, o.seed = 3;
  return o;
}

Trained train_on(const DeviceDataset& data) {
  auto& rt = anycl::test::runtime();
  anycl::Sequential model(small_spec());
  model.build(rt, 16);
  model.initialize(3);
  auto opt = anycl::make_optimizer(rt, model.parameter_count(), {"adam"});
  anycl::Trainer trainer(model, *opt, small_options());
  Trained out;
  for (const auto& e : trainer.fit(data)) out.losses.push_back(e.train_loss);
  out.parameters = model.parameters().download();
  return out;
}
}  // namespace

TEST_CASE("float features train exactly as the same bytes do, on one device and data-parallel") {
  auto& rt = anycl::test::runtime();
  anycl::data::Dataset bytes;
  bytes.count = 64, bytes.rows = 8, bytes.cols = 8, bytes.num_classes = 10;
  bytes.pixels = anycl::test::random_bytes(64 * 64, 21);
  const auto label_bytes = anycl::test::random_bytes(64, 22, 10);
  bytes.labels = label_bytes;
  const std::vector<int32_t> labels(label_bytes.begin(), label_bytes.end());
  // The floats the gather makes of the bytes (v/255, bit for bit): training must not tell them apart.
  const auto floats = anycl::data::Dataset::from_features(bytes.normalized(0, 64), labels, 64, 10);

  const Trained from_bytes = train_on(DeviceDataset(rt, bytes));
  const Trained from_floats = train_on(DeviceDataset::from_features(rt, floats.values, labels, 64, 10));
  CHECK(from_floats.losses == from_bytes.losses);
  CHECK(from_floats.parameters == from_bytes.parameters);

  anycl::Runtime a, b;
  anycl::Trainer dp({&a, &b}, small_spec(), {"adam"}, small_options());
  std::vector<double> losses;
  for (const auto& e : dp.fit(floats)) losses.push_back(e.train_loss);
  REQUIRE(losses.size() == from_bytes.losses.size());
  for (size_t s = 0; s < losses.size(); ++s)
    CHECK_MESSAGE(std::abs(losses[s] - from_bytes.losses[s]) <= 1e-3 * std::abs(from_bytes.losses[s]),
                  "epoch ", s + 1, ": data-parallel ", losses[s], " vs one device ", from_bytes.losses[s]);
}
