// The Trainer applying learning-rate schedules: the rate the optimizer sees at each step is the
// schedule's at that step (SGD's weight change is exactly lr · gradient), at no extra launch or
// host wait; each epoch reports its rate; ReduceLROnPlateau lowers it between epochs.
#include <doctest/doctest.h>
#include <anycl/data/dataset.hpp>
#include <anycl/error.hpp>
#include <anycl/train/trainer.hpp>

#include <cmath>

#include "data_files.hpp"
#include "helpers.hpp"

namespace {

const anycl::data::DataSplits& small_fashion() {
  static const anycl::data::DataSplits splits = [] {
    anycl::data::LoadOptions options;
    options.limit = 200;
    return anycl::data::load_folder(anycl::data::kFashionMnistDir, options);
  }();
  return splits;
}

// A real optimizer that notes the rate in effect at each of its steps.
class RecordingOptimizer final : public anycl::Optimizer {
 public:
  explicit RecordingOptimizer(std::unique_ptr<anycl::Optimizer> inner) : inner_(std::move(inner)) {}
  void step(anycl::Tensor& params, const anycl::Tensor& grads) override {
    rates.push_back(inner_->learning_rate());
    inner_->step(params, grads);
    ++iterations_;
  }
  std::string name() const override { return inner_->name(); }
  float learning_rate() const override { return inner_->learning_rate(); }
  void set_learning_rate(float lr) override { inner_->set_learning_rate(lr); }
  std::vector<anycl::Tensor*> state() override { return inner_->state(); }
  std::vector<float> rates;

 private:
  std::unique_ptr<anycl::Optimizer> inner_;
};

struct Run {
  std::vector<anycl::EpochStats> history;
  std::vector<float> rates;
  anycl::RuntimeCounters counters;
};

Run train(const std::string& schedule, size_t epochs, const std::string& optimizer = "sgd",
          bool eval = false) {
  auto& rt = anycl::test::runtime();
  const auto& data = small_fashion();
  anycl::Sequential model(784);
  model.dense(16, anycl::Activation::relu).dense(10);
  model.build(rt, 32);
  model.initialize(3);
  RecordingOptimizer opt(anycl::make_optimizer(rt, model.parameter_count(), {optimizer, 0.05f}));
  anycl::TrainOptions options;
  options.epochs = epochs;
  options.batch = 32;
  options.seed = 3;
  options.schedule = anycl::parse_schedule(schedule);
  anycl::Trainer trainer(model, opt, options);
  anycl::DeviceDataset train_set(rt, data.train), test_set(rt, data.test);
  Run run;
  run.history = trainer.fit(train_set, eval ? &test_set : nullptr);
  run.rates = opt.rates;
  run.counters = trainer.step_counters();
  return run;
}

}  // namespace

TEST_CASE("the optimizer steps at the schedule's rate of each step, and each epoch reports its last step's") {
  for (const char* spec :
       {"exponential:decay_steps=5,decay_rate=0.5", "exponential:decay_steps=5,decay_rate=0.5,staircase=1",
        "cosine:decay_steps=12,alpha=0.2", "cosine:decay_steps=6,alpha=0.2,warmup_target=0.1,warmup_steps=5",
        "step:boundaries=3,9;values=0.05,0.02,0.001"}) {
    CAPTURE(spec);
    const anycl::LearningRateSchedule s = anycl::parse_schedule(spec);
    const Run run = train(spec, 2);  // 200 samples / 32: 7 steps an epoch
    REQUIRE(run.rates.size() == 14);
    for (uint64_t i = 0; i < run.rates.size(); ++i) {
      CAPTURE(i);
      CHECK(run.rates[i] == anycl::scheduled_learning_rate(s, {}, 0.05f, i));
    }
    CHECK(run.rates[0] != run.rates[13]);
    REQUIRE(run.history.size() == 2);
    CHECK(run.history[0].learning_rate == double(run.rates[6]));
    CHECK(run.history[1].learning_rate == double(run.rates[13]));
  }
  // Steps count from 0, as Keras': a warm-up's first batch runs at the optimizer's rate, batch
  // warmup_steps + 1 at warmup_target.
  const Run warm = train("cosine:decay_steps=6,warmup_target=0.1,warmup_steps=5", 1);
  CHECK(warm.rates[0] == 0.05f);
  CHECK(warm.rates[1] == doctest::Approx(0.06).epsilon(1e-6));  // 0.05 + (0.1 - 0.05) / 5
  CHECK(warm.rates[4] == doctest::Approx(0.09).epsilon(1e-6));  // warmup_steps - 1
  CHECK(warm.rates[5] == 0.1f);
  const Run constant = train("constant", 1);
  for (float r : constant.rates) CHECK(r == 0.05f);
  CHECK(constant.history[0].learning_rate == double(0.05f));
}

TEST_CASE("a schedule adds no launch and no host wait to a step") {
  const Run plain = train("constant", 2, "adamw");
  const Run scheduled = train("cosine:decay_steps=10", 2, "adamw");
  CHECK(scheduled.counters.kernel_launches == plain.counters.kernel_launches);
  CHECK(scheduled.counters.host_waits == plain.counters.host_waits);
  CHECK(scheduled.counters.gemm_calls == plain.counters.gemm_calls);
}

TEST_CASE("SGD's weight change is the scheduled rate times the gradient") {
  auto& rt = anycl::test::runtime();
  const auto& data = small_fashion();
  anycl::Sequential model(784);
  model.dense(10);
  model.build(rt, 16);
  model.initialize(1);
  auto opt = anycl::make_optimizer(rt, model.parameter_count(), {"sgd", 0.5f});
  anycl::TrainOptions options;
  options.batch = 16;
  options.schedule = anycl::parse_schedule("exponential:decay_steps=2,decay_rate=0.25");
  anycl::Trainer trainer(model, *opt, options);
  anycl::DeviceDataset train_set(rt, data.train);
  std::vector<uint32_t> rows(16);
  for (uint32_t step = 0; step < 4; ++step) {
    CAPTURE(step);
    for (uint32_t i = 0; i < 16; ++i) rows[i] = step * 16 + i;
    const std::vector<float> before = model.parameters().download();
    trainer.train_on_batch(train_set, rows);
    const std::vector<float> after = model.parameters().download(), grad = model.gradients().download();
    size_t k = 0;  // the weight with the largest gradient: its change has the least relative rounding
    for (size_t i = 0; i < grad.size(); ++i)
      if (std::fabs(grad[i]) > std::fabs(grad[k])) k = i;
    REQUIRE(std::fabs(grad[k]) > 1e-3f);
    const double expected = 0.5 * std::pow(0.25, step / 2.0);
    CHECK((double(before[k]) - double(after[k])) / double(grad[k]) ==
          doctest::Approx(expected).epsilon(1e-3));
  }
}

TEST_CASE("ReduceLROnPlateau lowers the rate between epochs as Keras does - val_loss needs validation data") {
  // min_delta 10: no epoch after the first improves, so with patience 1 each later epoch end reduces.
  const Run run = train("plateau:patience=1,min_delta=10,factor=0.5", 4, "sgd", true);
  REQUIRE(run.history.size() == 4);
  CHECK(run.history[0].learning_rate == 0.05f);
  CHECK(run.history[1].learning_rate == 0.05f);
  CHECK(run.history[2].learning_rate == 0.025f);
  CHECK(run.history[3].learning_rate == 0.0125f);
  for (size_t i = 0; i < 7; ++i) CHECK(run.rates[i] == 0.05f);
  CHECK(run.rates[14] == 0.025f);
  CHECK(run.rates[27] == 0.0125f);

  const std::string m = anycl::test::thrown_message<anycl::ValidationError>(
      [&] { train("plateau:monitor=val_loss", 1, "sgd", false); });
  CHECK_MESSAGE(anycl::test::contains_all(m, {"val_loss", "no validation data"}), m);
}
