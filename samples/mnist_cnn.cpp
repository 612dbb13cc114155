// Sample: Keras' mnist_cnn, written with the anycl library API.
// Trains Conv2D 32 3×3 → Conv2D 64 3×3 → MaxPool 2×2 → Dropout 0.25 → Flatten → Dense 128 →
// Dropout 0.5 → Dense 10 (softmax) with Adam on Fashion-MNIST (or the MNIST-format folder given
// as the first argument) and prints the test accuracy. Images are NCHW: (1, 28, 28) per sample.
// Usage: mnist_cnn [DATA_DIR] [EPOCHS]      device: ANYCL_DEVICE, else the best one
#include <fmt/format.h>
#include <anycl/data/dataset.hpp>
#include <anycl/error.hpp>
#include <anycl/nn/sequential.hpp>
#include <anycl/optim/optimizer.hpp>
#include <anycl/runtime.hpp>
#include <anycl/train/trainer.hpp>

#include <cstdlib>

int main(int argc, char** argv) try {
  const size_t batch_size = 128, num_classes = 10;
  const size_t epochs = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 12;
  if (epochs == 0) {
    fmt::print(stderr, "usage: mnist_cnn [DATA_DIR] [EPOCHS >= 1]\n");
    return 2;
  }

  // The data, split between train and test sets (pixels are scaled to [0, 1] on the device).
  const auto data = anycl::data::load_folder(argc > 1 ? argv[1] : "");
  fmt::print("{} train samples\n{} test samples\n", data.train.count, data.test.count);

  anycl::Runtime rt;
  fmt::print("device: {}\n", rt.info().name);

  // input_shape = (1, rows, cols): channels first (NCHW).
  anycl::Sequential model(anycl::Shape{1, data.train.rows, data.train.cols});
  model.conv2d(32, 3, anycl::Activation::relu)
      .conv2d(64, 3, anycl::Activation::relu)
      .max_pool2d(2)
      .dropout(0.25f)
      .flatten()
      .dense(128, anycl::Activation::relu)
      .dropout(0.5f)
      .dense(num_classes);
  model.build(rt, batch_size);
  model.initialize(/*seed=*/1);
  fmt::print("{}", model.summary());

  // model.compile(loss='categorical_crossentropy', optimizer=Adam(), metrics=['accuracy'])
  auto optimizer = anycl::make_optimizer(rt, model.parameter_count(), {"adam"});

  const anycl::DeviceDataset train(rt, data.train), test(rt, data.test);
  anycl::TrainOptions options;
  options.epochs = epochs;
  options.batch = batch_size;
  anycl::Trainer trainer(model, *optimizer, options);
  trainer.on_epoch_end = [&](const anycl::EpochStats& s) {
    fmt::print(
        "Epoch {}/{} - {:.1f}s - loss: {:.4f} - accuracy: {:.4f} - val_loss: {:.4f} - val_accuracy: {:.4f}\n",
        s.epoch, epochs, s.seconds, s.train_loss, s.train_accuracy, s.eval.loss, s.eval.accuracy);
  };
  trainer.fit(train, &test);

  const auto score = trainer.evaluate(test);
  fmt::print("Test loss: {:.4f}\nTest accuracy: {:.4f}\n", score.loss, score.accuracy);
  return 0;
} catch (const anycl::Error& e) {
  fmt::print(stderr, "mnist_cnn: {}\n", e.what());
  return 1;
}
