// Embedding anycl in an application: list the OpenCL devices, build a small MLP, train it on float
// data generated here (no files needed), and predict. Uses only the installed API.
#include <anycl/anycl.hpp>

#include <cstdio>
#include <random>

namespace {

// Three classes of 16-value readings: a bright top row, a bright left column or a bright diagonal
// of a 4x4 sensor grid, over noise. Easy to tell apart, so a few steps are enough to learn them.
void make_data(size_t count, unsigned seed, std::vector<float>& x, std::vector<int32_t>& y) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> noise(0.f, 0.25f);
  for (size_t i = 0; i < count; ++i) {
    const int label = int(i % 3);
    for (int r = 0; r < 4; ++r)
      for (int c = 0; c < 4; ++c) {
        const bool on = (label == 0 && r == 0) || (label == 1 && c == 0) || (label == 2 && r == c);
        x.push_back(on ? 1.f - noise(rng) : noise(rng));
      }
    y.push_back(label);
  }
}

}  // namespace

int main() {
  try {
    // 1. What is installed (anycl::list_devices throws DeviceError with an install hint if nothing).
    for (const auto& dev : anycl::list_devices())
      std::printf("device %zu: %s (%s)\n", dev.index, dev.name.c_str(), dev.platform_name.c_str());

    // 2. A runtime on the best device (or $ANYCL_DEVICE) and a 16-32-3 MLP.
    anycl::Runtime rt;
    anycl::Sequential model(16);
    model.dense(32, anycl::Activation::relu).dense(3);
    model.build(rt, 32);
    model.initialize(/*seed=*/7);
    auto optimizer = anycl::make_optimizer(rt, model.parameter_count(), {"adam", 0.01f});

    // 3. Train: 3 epochs of 8 steps of 32 samples, evaluated on held-out data after each.
    std::vector<float> x, test_x;
    std::vector<int32_t> y, test_y;
    make_data(256, 1, x, y);
    make_data(96, 2, test_x, test_y);
    const auto train = anycl::DeviceDataset::from_features(rt, x, y, 16, 3);
    const auto test = anycl::DeviceDataset::from_features(rt, test_x, test_y, 16, 3);
    anycl::TrainOptions options;
    options.epochs = 3, options.batch = 32;
    anycl::Trainer trainer(model, *optimizer, options);
    for (const auto& e : trainer.fit(train, &test))
      std::printf("epoch %zu: loss %.4f, test accuracy %.3f\n", e.epoch, e.train_loss, e.eval.accuracy);

    // 4. Predict: class probabilities of the first three test samples (no labels needed).
    const std::vector<float> first3(test_x.begin(), test_x.begin() + 3 * 16);
    const std::vector<float> p = anycl::predict(model, first3);
    for (size_t i = 0; i < 3; ++i)
      std::printf("sample %zu (class %d): p = %.3f %.3f %.3f\n", i, test_y[i], p[3 * i], p[3 * i + 1],
                  p[3 * i + 2]);
    return trainer.evaluate(test).accuracy > 0.9 ? 0 : 3;  // 3: it did not learn (should not happen)
  } catch (const anycl::Error& e) {
    std::fprintf(stderr, "embed: %s\n", e.what());
    return 1;
  }
}
