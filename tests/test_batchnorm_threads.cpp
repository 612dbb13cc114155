// Two Runtimes training BatchNorm models in two threads at once, with the split form of the
// reductions forced (ops/batchnorm_split.hpp, as on GPUs): each thread's weights and moving statistics
// equal a run alone, bit for bit (docs/guarantees.md, "Threads"). Not among the Oclgrind kernel tests
// (tools/run-oclgrind.sh): test_batchnorm_split.cpp checks the split kernels there.
#include <doctest/doctest.h>
#include <anycl/data/dataset.hpp>
#include <anycl/nn/model_from_flags.hpp>
#include <anycl/train/trainer.hpp>

#include <condition_variable>
#include <cstring>
#include <exception>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "batchnorm_form.hpp"
#include "helpers.hpp"

namespace {

// 64 synthetic 10x10 images of 4 classes.
const anycl::data::Dataset& small_images() {
  static const anycl::data::Dataset data = [] {
    anycl::data::Dataset d;
    d.count = 64, d.rows = 10, d.cols = 10, d.num_classes = 4;
    std::mt19937 gen(48);
    for (size_t i = 0; i < d.count * d.rows * d.cols; ++i) d.pixels.push_back(uint8_t(gen() % 256));
    for (size_t i = 0; i < d.count; ++i) d.labels.push_back(uint8_t(i % 4));
    return d;
  }();
  return data;
}

// A BatchNorm CNN (conv → BatchNorm over 6 channels of 8x8, then Dense → BatchNorm over 16 features)
// trained 16 steps with the split form forced over 3 groups a channel; `ready` is called between
// building and training. The parameters, then the moving statistics.
std::vector<float> train_split_batchnorm(anycl::Runtime& rt, const std::function<void()>& ready) {
  const anycl::test::BatchNormForm form(rt, {false, 3});
  anycl::ModelFlags flags;
  flags.layers = "conv6x3:linear,bn0.9_0.001:relu,pool2,flatten,16:linear,bn0.9_0.001:relu";
  flags.dropout = 0.f;
  anycl::Sequential model(anycl::model_from_flags(flags, anycl::Shape{1, 10, 10}, 4));
  model.build(rt, 32);
  model.initialize(48);
  auto opt = anycl::make_optimizer(rt, model.parameter_count(), {"adam"});
  anycl::TrainOptions options;
  options.epochs = 8;  // 2 steps an epoch
  options.batch = 32;
  options.seed = 48;
  anycl::Trainer trainer(model, *opt, options);
  const anycl::DeviceDataset train(rt, small_images());
  ready();
  trainer.fit(train);
  return model.download_weights();
}

}  // namespace

// Each Runtime's BatchNorm layers own their split form's scratch buffer and kernels. Both threads build
// first, then train at once, so that their launches overlap; a scratch buffer shared between the
// runtimes' layers makes the results differ from a run alone (checked by hand on PoCL: with one
// process-wide partials buffer in BatchNormSplitReductions both threads' weights differed, 3 runs of 3).
TEST_CASE("two Runtimes training BatchNorm models with the split form in two threads match a run alone") {
  const std::vector<float> alone = train_split_batchnorm(anycl::test::runtime(), [] {});
  constexpr int kThreads = 2;
  std::vector<float> results[kThreads];
  std::string errors[kThreads];
  std::mutex m;
  std::condition_variable cv;
  int built = 0;
  const auto ready = [&] {  // waits until every thread has built its model
    std::unique_lock<std::mutex> lock(m);
    if (++built == kThreads) cv.notify_all();
    cv.wait(lock, [&] { return built >= kThreads; });
  };
  std::vector<std::thread> threads;
  for (int i = 0; i < kThreads; ++i)
    threads.emplace_back([&, i] {
      try {
        anycl::Runtime rt;  // device from $ANYCL_DEVICE, as the shared test Runtime
        results[i] = train_split_batchnorm(rt, ready);
      } catch (const std::exception& e) {
        errors[i] = e.what();
        ready();  // a thread that failed before building must not hold the other one back
      }
    });
  for (auto& t : threads) t.join();
  for (int i = 0; i < kThreads; ++i) {
    CAPTURE(i);
    REQUIRE_MESSAGE(errors[i].empty(), errors[i]);
    REQUIRE(results[i].size() == alone.size());
    CHECK(std::memcmp(results[i].data(), alone.data(), alone.size() * sizeof(float)) == 0);
  }
}
