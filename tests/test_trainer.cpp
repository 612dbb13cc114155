// Training on real Fashion-MNIST samples: it learns, it is deterministic, the last partial
// batch counts, and no step makes the host wait.
#include <doctest/doctest.h>
#include <anycl/data/dataset.hpp>
#include <anycl/train/trainer.hpp>

#include <chrono>
#include <cmath>
#include <map>
#include <thread>

#include "helpers.hpp"

namespace {

struct Run {
  std::vector<anycl::EpochStats> history;
  std::vector<float> parameters;
  anycl::RuntimeCounters step_counters;
  uint64_t steps = 0;
  anycl::EvalStats test;
};

const anycl::data::DataSplits& fashion(size_t limit) {
  static std::map<size_t, anycl::data::DataSplits> cache;
  auto it = cache.find(limit);
  if (it == cache.end()) {
    anycl::data::LoadOptions options;
    options.limit = limit;
    it = cache.emplace(limit, anycl::data::load_folder(anycl::data::kFashionMnistDir, options)).first;
  }
  return it->second;
}

// The reference architecture (784-512-512-10, ReLU, dropout 0.2) unless `hidden` says otherwise.
Run train(size_t limit, size_t epochs, uint64_t seed, const std::string& optimizer = "rmsprop",
          size_t batch = 128, size_t hidden = 512) {
  auto& rt = anycl::test::runtime();
  const auto& data = fashion(limit);
  anycl::Sequential model(784);
  model.dense(hidden, anycl::Activation::relu)
      .dropout(0.2f)
      .dense(hidden, anycl::Activation::relu)
      .dropout(0.2f)
      .dense(10);
  model.build(rt, batch);
  model.initialize(seed);
  auto opt = anycl::make_optimizer(rt, model.parameter_count(), {optimizer});
  anycl::TrainOptions options;
  options.epochs = epochs;
  options.batch = batch;
  options.seed = seed;
  anycl::Trainer trainer(model, *opt, options);
  anycl::DeviceDataset train(rt, data.train), test(rt, data.test);
  Run run;
  run.history = trainer.fit(train, &test);
  run.parameters = model.parameters().download();
  run.step_counters = trainer.step_counters();
  run.steps = trainer.steps_done();
  run.test = trainer.evaluate(test);
  return run;
}

}  // namespace

TEST_CASE("the reference MLP learns Fashion-MNIST from 2000 samples") {
  // 5 epochs over 2,000 samples (80 steps of 128). Chance is 0.10; measured on PoCL: 0.799 on
  // the 10,000 test images (epochs: 0.68, 0.74, 0.70, 0.78, 0.80 — single epochs are noisy).
  // The floor of 0.75 leaves room for other devices' rounding, while a broken gradient,
  // optimizer or data path (which stays near chance or diverges) cannot pass.
  const Run run = train(2000, 5, 1);
  REQUIRE(run.history.size() == 5);
  CHECK(run.history[4].train_loss < run.history[0].train_loss);
  CHECK(run.test.count == 10000);
  CHECK(run.test.accuracy > 0.75);
  CHECK(run.history.back().eval.accuracy == run.test.accuracy);
}

TEST_CASE("the same seed gives identical losses and weights - another seed does not") {
  const Run a = train(640, 2, 7, "adam", 64, 64), b = train(640, 2, 7, "adam", 64, 64);
  for (size_t e = 0; e < 2; ++e) {
    CHECK(a.history[e].train_loss == b.history[e].train_loss);
    CHECK(a.history[e].train_accuracy == b.history[e].train_accuracy);
    CHECK(a.history[e].eval.loss == b.history[e].eval.loss);
  }
  CHECK(a.parameters == b.parameters);
  const Run c = train(640, 2, 8, "adam", 64, 64);
  CHECK(c.parameters != a.parameters);
  CHECK(c.history[0].train_loss != a.history[0].train_loss);
}

TEST_CASE("every sample is used each epoch - the last batch partial - no host wait inside a step") {
  const Run run = train(300, 2, 3, "sgd", 128, 32);
  CHECK(run.history[0].steps == 3);  // 128 + 128 + 44
  CHECK(run.steps == 6);
  // Accuracy is a count over all 300 samples: a multiple of 1/300.
  const double correct = run.history[0].train_accuracy * 300;
  CHECK(correct == doctest::Approx(std::round(correct)).epsilon(1e-9));
  CHECK(run.step_counters.host_waits == 0);
  // gather, 3 bias+act (2 of them with their dropout fused in), loss, 3 backward (2 with the dropout's
  // mask), update; besides them, the transposes that
  // Dense runs where the device's GEMM layout wants its operands transposed (xᵀ per layer, dzᵀ and
  // Wᵀ per dx: none on PoCL at these small shapes, some on a GPU).
  CHECK(run.step_counters.kernel_launches - run.step_counters.transposes == 6 * 9);
  CHECK(run.step_counters.transposes <= 6 * (3 + 2 * 2));
  CHECK(run.step_counters.gemm_calls == 6 * 8);  // 3 forward, 3 dW, 2 dX
}

TEST_CASE("max_steps stops training mid-epoch and the first step's finish time is recorded without a wait") {
  auto& rt = anycl::test::runtime();
  const auto& data = fashion(600);
  anycl::Sequential model(784);
  model.dense(32, anycl::Activation::relu).dense(10);
  model.build(rt, 64);
  model.initialize(5);
  auto opt = anycl::make_optimizer(rt, model.parameter_count(), {"sgd"});
  anycl::TrainOptions options;
  options.epochs = 3;
  options.batch = 64;
  options.max_steps = 4;
  anycl::Trainer trainer(model, *opt, options);
  anycl::DeviceDataset train(rt, data.train);
  CHECK(!trainer.first_step_finished());
  const auto before = std::chrono::steady_clock::now();
  trainer.fit(train);
  CHECK(trainer.stopped());
  CHECK(trainer.steps_done() == 4);
  CHECK(trainer.epochs_done() == 0);
  CHECK(trainer.step_in_epoch() == 4);
  CHECK(trainer.step_counters().host_waits == 0);
  rt.finish();  // the marker after step 1 has completed: its callback runs soon after
  auto first = trainer.first_step_finished();
  for (int i = 0; i < 200 && !first; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    first = trainer.first_step_finished();
  }
  REQUIRE(first);
  CHECK(*first >= before);
  CHECK(*first <= std::chrono::steady_clock::now());

  trainer.fit(train);  // max_steps counts per fit(): 4 more steps of the same epoch (10 steps)
  CHECK(trainer.steps_done() == 8);
  CHECK(trainer.step_in_epoch() == 8);
}

TEST_CASE("evaluating a host data set changed in place uses its new contents, not a stale device copy") {
  auto& rt = anycl::test::runtime();
  anycl::data::Dataset data = fashion(200).test;
  anycl::Sequential model(784);
  model.dense(10);
  model.build(rt, 64);
  model.initialize(9);
  auto opt = anycl::make_optimizer(rt, model.parameter_count(), {"sgd"});
  anycl::TrainOptions options;
  options.batch = 64;
  anycl::Trainer trainer(model, *opt, options);
  const anycl::EvalStats before = trainer.evaluate(data);
  // Every label moved one class on: an untrained model's accuracy cannot stay the same bit for bit
  // on all 10 classes, and the loss changes with every label.
  for (auto& label : data.labels) label = uint8_t((label + 1) % 10);
  const anycl::EvalStats after = trainer.evaluate(data);
  CHECK(after.loss != before.loss);
  anycl::DeviceDataset fresh(rt, data);
  const anycl::EvalStats expected = trainer.evaluate(fresh);
  CHECK(after.loss == expected.loss);
  CHECK(after.accuracy == expected.accuracy);
}
