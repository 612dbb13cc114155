// Sample: Keras' classic mnist_mlp, written with the anycl library API.
// Trains 784-512-512-10 (ReLU, dropout 0.2, softmax) with RMSprop on Fashion-MNIST (or the
// MNIST-format folder given as the first argument) and prints the test accuracy.
// Usage: mnist_mlp [DATA_DIR] [EPOCHS]      device: ANYCL_DEVICE, else the best one
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
  const size_t epochs = argc > 2 ? std::strtoul(argv[2], nullptr, 10) : 20;
  if (epochs == 0) {
    fmt::print(stderr, "usage: mnist_mlp [DATA_DIR] [EPOCHS >= 1]\n");
    return 2;
  }

  // The data, split between train and test sets (pixels are scaled to [0, 1] on the device).
  const auto data = anycl::data::load_folder(argc > 1 ? argv[1] : "");
  fmt::print("{} train samples\n{} test samples\n", data.train.count, data.test.count);

  // The device: compiles anycl's kernels (or loads them from the disk cache).
  anycl::Runtime rt;
  fmt::print("device: {}\n", rt.info().name);

  // model = Sequential(); Dense(512, relu) → Dropout(0.2) → Dense(512, relu) → Dropout(0.2) →
  // Dense(10); the softmax is part of the loss (softmax + cross-entropy in one kernel).
  anycl::Sequential model(data.train.features());
  model.dense(512, anycl::Activation::relu)
      .dropout(0.2f)
      .dense(512, anycl::Activation::relu)
      .dropout(0.2f)
      .dense(num_classes);
  model.build(rt, batch_size);
  model.initialize(/*seed=*/1);
  fmt::print("{}", model.summary());

  // model.compile(loss='categorical_crossentropy', optimizer=RMSprop(), metrics=['accuracy'])
  auto optimizer = anycl::make_optimizer(rt, model.parameter_count(), {"rmsprop"});

  // model.fit(x_train, y_train, batch_size, epochs, validation_data=(x_test, y_test))
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

  // score = model.evaluate(x_test, y_test)
  const auto score = trainer.evaluate(test);
  fmt::print("Test loss: {:.4f}\nTest accuracy: {:.4f}\n", score.loss, score.accuracy);
  return 0;
} catch (const anycl::Error& e) {
  fmt::print(stderr, "mnist_mlp: {}\n", e.what());
  return 1;
}
