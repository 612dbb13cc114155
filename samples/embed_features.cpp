// Training on your own float data: three interleaved 2-D spirals, one class each — a classic
// problem no straight line separates. The whole embedding API in one include.
#include <anycl/anycl.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <random>

namespace {

// n points per spiral: the radius grows from 0 to 1 while the angle turns 1.5 times around; the
// three spirals start a third of a turn apart. A little noise keeps it from being a lookup table.
void spirals(size_t n, unsigned seed, std::vector<float>& x, std::vector<int32_t>& y) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> noise(0.f, 0.02f);
  const float pi = 3.14159265f;
  for (int32_t c = 0; c < 3; ++c)
    for (size_t i = 0; i < n; ++i) {
      const float r = float(i + 1) / float(n);
      const float angle = float(c) * 2.f * pi / 3.f + r * 3.f * pi;
      x.push_back(r * std::cos(angle) + noise(rng));  // row-major: x then y of each point
      x.push_back(r * std::sin(angle) + noise(rng));
      y.push_back(c);
    }
}

}  // namespace

int main() {
  try {
    // 1. The data, made here: 2 features per sample, labels 0, 1, 2. Another draw to test on.
    const size_t d = 2, k = 3;
    std::vector<float> x, test_x;
    std::vector<int32_t> y, test_y;
    spirals(400, 1, x, y);
    spirals(200, 2, test_x, test_y);

    // 2. A device, a 2-64-64-3 network and Adam. The data goes to the device once.
    anycl::Runtime rt;  // best device, or $ANYCL_DEVICE
    anycl::Sequential model(d);
    model.dense(64, anycl::Activation::relu).dense(64, anycl::Activation::relu).dense(k);
    model.build(rt, 64);
    model.initialize(/*seed=*/1);
    auto optimizer = anycl::make_optimizer(rt, model.parameter_count(), {"adam", 0.01f});
    const auto train = anycl::DeviceDataset::from_features(rt, x, y, d, k);

    // 3. Train: every step gathers its shuffled batch on the device; nothing waits per step.
    anycl::TrainOptions options;
    options.epochs = 60;
    options.batch = 64;
    anycl::Trainer trainer(model, *optimizer, options);
    const auto start = std::chrono::steady_clock::now();
    const auto history = trainer.fit(train);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    // 4. Predict the test points (no labels needed) and score the most probable class.
    const std::vector<float> p = anycl::predict(model, test_x);
    const std::vector<size_t> predicted = anycl::predicted_classes(p, k);
    size_t right = 0;
    for (size_t i = 0; i < predicted.size(); ++i) right += predicted[i] == size_t(test_y[i]);
    const double accuracy = double(right) / double(predicted.size());
    std::printf("device: %s\n", rt.info().name.c_str());
    std::printf("trained %zu epochs in %.2f s: train loss %.4f, train accuracy %.4f\n", history.size(),
                seconds, history.back().train_loss, history.back().train_accuracy);
    std::printf("test accuracy %.4f on %zu held-out points\n", accuracy, predicted.size());
    return accuracy >= 0.95 ? 0 : 3;  // 3: it did not learn the spirals
  } catch (const anycl::Error& e) {
    std::fprintf(stderr, "embed_features: %s\n", e.what());
    return 1;
  }
}
