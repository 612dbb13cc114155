// Data-parallel training in one process: two replicas (two contexts on the PoCL device) with
// sharded batches follow single-device training with the same global batch, with and without
// dropout, for equal and unequal shares; the replicas stay identical.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <anycl/data/dataset.hpp>
#include <anycl/error.hpp>
#include <anycl/train/trainer.hpp>

#include <cmath>

#include "helpers.hpp"

namespace {

constexpr size_t kBatch = 64, kSteps = 50;
constexpr uint64_t kSeed = 11;

anycl::ModelSpec spec(float dropout) {
  anycl::Sequential m(784);
  m.dense(32, anycl::Activation::relu);
  if (dropout > 0) m.dropout(dropout);
  m.dense(10);
  return m.spec();
}

const anycl::data::Dataset& samples() {
  static const anycl::data::Dataset data = [] {
    anycl::data::LoadOptions load;
    load.limit = kBatch;  // one step per epoch: each epoch's loss is one step's loss
    return anycl::data::load_folder(anycl::data::kFashionMnistDir, load).train;
  }();
  return data;
}

anycl::TrainOptions options() {
  anycl::TrainOptions o;
  o.epochs = kSteps;
  o.batch = kBatch;
  o.seed = kSeed;
  return o;
}

std::vector<double> single_device(float dropout) {
  auto& rt = anycl::test::runtime();
  anycl::Sequential model(spec(dropout));
  model.build(rt, kBatch);
  model.initialize(kSeed);
  auto opt = anycl::make_optimizer(rt, model.parameter_count(), {"adam"});
  anycl::Trainer trainer(model, *opt, options());
  const anycl::DeviceDataset train(rt, samples());
  std::vector<double> losses;
  for (const auto& e : trainer.fit(train)) losses.push_back(e.train_loss);
  return losses;
}

void check_follows(const std::vector<double>& got, const std::vector<double>& ref) {
  REQUIRE(got.size() == ref.size());
  for (size_t s = 0; s < ref.size(); ++s)
    CHECK_MESSAGE(std::abs(got[s] - ref[s]) <= 1e-3 * std::abs(ref[s]),
                  fmt::format("step {}: data-parallel {} vs single device {}", s, got[s], ref[s]));
}

}  // namespace

TEST_CASE("two replicas follow single-device training with the same global batch") {
  for (float dropout : {0.f, 0.2f}) {
    CAPTURE(dropout);
    const auto ref = single_device(dropout);
    for (const std::vector<double>& shares : {std::vector<double>{}, std::vector<double>{3, 1}}) {
      CAPTURE(shares.size());
      anycl::Runtime a, b;
      anycl::Trainer dp({&a, &b}, spec(dropout), {"adam"}, options(), nullptr, shares);
      std::vector<double> losses;
      for (const auto& e : dp.fit(samples())) losses.push_back(e.train_loss);
      check_follows(losses, ref);
      CHECK(dp.steps_done() == kSteps);
      CHECK(dp.replica(0).model().parameters().download() == dp.replica(1).model().parameters().download());
    }
  }
}

TEST_CASE("a replica whose shard is empty contributes nothing") {
  anycl::Runtime a, b;
  anycl::TrainOptions o = options();
  o.epochs = 3;
  o.batch = 1;  // one row per batch: the second replica's shard is always empty
  anycl::data::Dataset three = samples();
  three.count = 3;
  three.pixels.resize(3 * 784);
  three.labels.resize(3);
  anycl::Trainer dp({&a, &b}, spec(0.f), {"sgd"}, o);
  const auto history = dp.fit(three);
  CHECK(history.size() == 3);
  CHECK(std::isfinite(history.back().train_loss));
  CHECK(dp.replica(0).model().parameters().download() == dp.replica(1).model().parameters().download());
}

TEST_CASE("data-parallel set-up errors are clear") {
  anycl::Runtime a;
  CHECK_THROWS_WITH_AS(anycl::Trainer({}, spec(0.f), {"sgd"}, options()), doctest::Contains("at least one"),
                       anycl::ValidationError);
  CHECK_THROWS_WITH_AS(anycl::Trainer({&a}, spec(0.f), {"sgd"}, options(), nullptr, {1, 2}),
                       doctest::Contains("shares"), anycl::ValidationError);
  CHECK_THROWS_AS(anycl::Trainer({&a}, spec(0.f), {"sgd"}, options(), nullptr, {-1}), anycl::ValidationError);
}

TEST_CASE("BatchNormalization under data parallelism: per-replica batch statistics, moving ones averaged") {
  // Each replica normalises its shard with the shard's statistics (Keras' default under a
  // distribution strategy); after every step the replicas' moving statistics are averaged, so the
  // replicas hold the same weights and state, for equal and unequal shares and an empty shard.
  anycl::Sequential m(784);
  m.dense(32, anycl::Activation::linear).add({"batchnorm", "0.9 0.001"}).dense(10);
  const anycl::ModelSpec bn = m.spec();
  for (const std::vector<double>& shares : {std::vector<double>{}, std::vector<double>{3, 1}}) {
    CAPTURE(shares.size());
    anycl::Runtime a, b;
    anycl::TrainOptions o = options();
    o.epochs = 5;
    anycl::Trainer dp({&a, &b}, bn, {"adam"}, o, nullptr, shares);
    for (const auto& e : dp.fit(samples())) CHECK(std::isfinite(e.train_loss));
    const std::vector<float> first = dp.replica(0).model().download_weights();
    CHECK(first == dp.replica(1).model().download_weights());
    const size_t state = dp.replica(0).model().parameter_count();
    REQUIRE(first.size() == state + 64);
    CHECK(first[state] != 0.f);  // the moving mean moved
  }
  anycl::Runtime a, b;
  anycl::TrainOptions o = options();
  o.epochs = 2;
  o.batch = 2;  // two rows and a 3:1 split: the second replica's shard is empty
  anycl::data::Dataset two = samples();
  two.count = 2;
  two.pixels.resize(2 * 784);
  two.labels.resize(2);
  anycl::Trainer dp({&a, &b}, bn, {"sgd"}, o, nullptr, {3, 1});
  dp.fit(two);
  CHECK(dp.replica(0).model().download_weights() == dp.replica(1).model().download_weights());
}
