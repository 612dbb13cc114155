// Golden trajectory: a small MLP trained by anycl's Trainer on a fixed Fashion-MNIST subset
// follows the host reference (tests/reference/mlp.hpp) step by step, and two device runs are
// bit-identical. One step per epoch, so each epoch's training loss is one step's loss.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <anycl/data/dataset.hpp>
#include <anycl/train/batch_order.hpp>
#include <anycl/train/trainer.hpp>

#include "helpers.hpp"
#include "indirect_gemm.hpp"
#include "reference/gather.hpp"
#include "reference/mlp.hpp"

namespace {

constexpr size_t kSamples = 96, kSteps = 20;
constexpr uint64_t kSeed = 2024;

anycl::ModelSpec small_spec() {
  anycl::Sequential m(784);
  m.dense(48, anycl::Activation::relu).dropout(0.2f).dense(24, anycl::Activation::tanh).dense(10);
  return m.spec();
}

std::vector<double> device_losses(const anycl::data::Dataset& data, const anycl::OptimizerConfig& config,
                                  std::vector<float>* final_params) {
  auto& rt = anycl::test::runtime();
  anycl::Sequential model(small_spec());
  model.build(rt, kSamples);
  model.initialize(kSeed);
  auto opt = anycl::make_optimizer(rt, model.parameter_count(), config);
  anycl::TrainOptions options;
  options.epochs = kSteps;
  options.batch = kSamples;
  options.seed = kSeed;
  anycl::Trainer trainer(model, *opt, options);
  const anycl::DeviceDataset train(rt, data);
  std::vector<double> losses;
  for (const auto& e : trainer.fit(train)) losses.push_back(e.train_loss);
  *final_params = model.parameters().download();
  return losses;
}

std::vector<double> reference_losses(const anycl::data::Dataset& data, const anycl::OptimizerConfig& config) {
  anycl::reference::Mlp mlp(small_spec(), kSeed);
  anycl::reference::Optimizer opt(config, mlp.parameters().size());
  std::vector<double> losses;
  std::vector<float> x(kSamples * 784);
  std::vector<int> y(kSamples);
  for (uint32_t step = 0; step < kSteps; ++step) {
    const auto order = anycl::epoch_order(kSamples, kSeed, step);
    anycl::reference::gather_batch(data.pixels.data(), data.labels.data(), order.data(), 0, kSamples, 784,
                                   x.data(), y.data());
    losses.push_back(mlp.train_step(x, y, kSamples, kSeed, step, opt) / double(kSamples));
  }
  return losses;
}

}  // namespace

TEST_CASE("golden trajectory - the device follows the host reference for 20 steps") {
  anycl::data::LoadOptions load;
  load.limit = kSamples;
  const auto data = anycl::data::load_folder(anycl::data::kFashionMnistDir, load).train;
  for (const char* name : {"momentum", "adam"}) {
    CAPTURE(name);
    anycl::OptimizerConfig config;
    config.name = name;
    config.lr = name == std::string("adam") ? 0.002f : 0.05f;
    std::vector<float> params_a, params_b;
    const auto a = device_losses(data, config, &params_a);
    const auto b = device_losses(data, config, &params_b);
    const auto ref = reference_losses(data, config);
    REQUIRE(a.size() == kSteps);
    CHECK(a == b);  // bit-identical on the same device
    CHECK(params_a == params_b);
    CHECK(ref.back() < ref.front() * 0.8);  // the trajectory goes somewhere
    for (size_t s = 0; s < kSteps; ++s) {
      CAPTURE(s);
      CHECK_MESSAGE(std::abs(a[s] - ref[s]) <= 1e-3 * std::abs(ref[s]) + 1e-5,
                    fmt::format("step {}: device {} vs reference {}", s, a[s], ref[s]));
    }
  }
}

// Where CLBlast runs its indirect GEMMK=0 kernel, Dense asks every product as TN over operands its
// own transpose made (xᵀ forward, dzᵀ and Wᵀ for dx): the same trajectory, within the same bound.
TEST_CASE("golden trajectory on CLBlast's indirect kernel - Dense hands it transposed operands") {
  anycl::data::LoadOptions load;
  load.limit = kSamples;
  const auto data = anycl::data::load_folder(anycl::data::kFashionMnistDir, load).train;
  auto& rt = anycl::test::runtime();
  const anycl::test::IndirectGemmScope indirect(rt);
  anycl::OptimizerConfig config;
  config.name = "momentum";
  config.lr = 0.05f;
  std::vector<float> params;
  const auto before = rt.counters().transposes;
  const auto a = device_losses(data, config, &params);
  // Per step: x of 3 layers forward, dz and W of the 2 layers that pass dx back.
  CHECK(rt.counters().transposes - before >= kSteps * 7);
  const auto ref = reference_losses(data, config);
  REQUIRE(a.size() == kSteps);
  for (size_t s = 0; s < kSteps; ++s) {
    CAPTURE(s);
    CHECK_MESSAGE(std::abs(a[s] - ref[s]) <= 1e-3 * std::abs(ref[s]) + 1e-5,
                  fmt::format("step {}: device {} vs reference {}", s, a[s], ref[s]));
  }
}
