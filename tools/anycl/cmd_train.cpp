// `anycl train`: the reference MLP (or one described by the flags) trained on an MNIST-format
// data set on the selected device, with per-epoch metrics, an optional metrics file and model.
#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <sstream>

#include "anycl/blas.hpp"
#include "anycl/data/dataset.hpp"
#include "anycl/error.hpp"
#include "anycl/train/metrics_file.hpp"
#include "anycl/train/model_file.hpp"
#include "anycl/train/trainer.hpp"
#include "args.hpp"
#include "commands.hpp"
#include "device_flag.hpp"
#include "progress.hpp"

namespace anycl::cli {
namespace {

constexpr const char* kUsage =
    "usage: anycl train [flags]\n"
    "  Trains an MLP (default: Keras' mnist_mlp, 784-512-512-10, ReLU, dropout 0.2, RMSprop) on an\n"
    "  MNIST-format folder and reports loss and accuracy per epoch.\n"
    "  --data DIR              data set folder (default $ANYCL_DATA or /usr/share/datasets/fashion-mnist)\n"
    "  --device SPEC           device (index, p:d, gpu, cpu, vendor or name part; default: best)\n"
    "  --epochs N              epochs (default 20)\n"
    "  --batch N               batch size (default 128)\n"
    "  --layers A,B,...        hidden layer sizes (default 512,512; 'none' for no hidden layer)\n"
    "  --activation NAME       relu, tanh, sigmoid or linear (default relu)\n"
    "  --init NAME             glorot_uniform or he_uniform (default glorot_uniform)\n"
    "  --dropout RATE          dropout after each hidden layer, in [0, 1) (default 0.2)\n"
    "  --optimizer NAME        sgd, momentum, nesterov, rmsprop, adam, adamw (default rmsprop)\n"
    "  --lr RATE               learning rate (default 0.001; 0.01 for the SGD family)\n"
    "  --seed N                seed for weights, dropout and shuffling (default 1)\n"
    "  --limit N               train on the first N training samples only\n"
    "  --validation-split F    hold out the last fraction F of the training set for validation\n"
    "  --save FILE             write the trained model (.anycl) when training ends\n"
    "  --metrics FILE          write per-epoch metrics (.csv or .jsonl)\n"
    "  --quiet                 print only the final result\n";

std::vector<size_t> parse_layers(const std::string& text) {
  std::vector<size_t> sizes;
  if (text == "none" || text.empty()) return sizes;
  std::istringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    char* end = nullptr;
    const long long v = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end != '\0' || v < 1 || v > 65536)
      throw UsageError(fmt::format("--layers must be comma-separated sizes in [1, 65536], got '{}'", text));
    sizes.push_back(size_t(v));
  }
  return sizes;
}

template <typename F>
auto as_usage_error(const char* flag, F&& parse) {
  try {
    return parse();
  } catch (const ValidationError& e) {
    throw UsageError(fmt::format("{}: {}", flag, e.what()));
  }
}

}  // namespace

int run_train(int argc, char** argv) {
  const Args args(
      argc, argv, 2,
      {"--data", "--device", "--epochs", "--batch", "--layers", "--activation", "--init", "--dropout",
       "--optimizer", "--lr", "--seed", "--limit", "--validation-split", "--save", "--metrics"},
      {"--quiet", "--help"});
  if (args.has("--help")) return fmt::print("{}", kUsage), 0;
  if (!args.positional().empty()) throw UsageError("unexpected argument '" + args.positional().front() + "'");

  // Every flag is checked before anything slow happens.
  TrainOptions train;
  train.epochs = size_t(args.get_int("--epochs", 20, 1, 1000000));
  train.batch = size_t(args.get_int("--batch", 128, 1, 1ll << 31));
  train.seed = uint64_t(args.get_int("--seed", 1, 0, (1ll << 62)));
  const auto hidden = parse_layers(args.get("--layers", "512,512"));
  const Activation activation =
      as_usage_error("--activation", [&] { return parse_activation(args.get("--activation", "relu")); });
  const Init init =
      as_usage_error("--init", [&] { return parse_init(args.get("--init", "glorot_uniform")); });
  const float dropout = float(args.get_double("--dropout", 0.2, 0.0, 0.999999));
  OptimizerConfig opt;
  opt.name = args.get("--optimizer", "rmsprop");
  opt.lr = float(args.get_double("--lr", 0.0, 1e-12, 10.0));
  data::LoadOptions load;
  load.limit = size_t(args.get_int("--limit", 0, 1, 1ll << 40));
  load.validation_split = args.get_double("--validation-split", 0.0, 0.0, 0.99);
  const bool quiet = args.has("--quiet");
  const std::string save_path = args.get("--save"), metrics_path = args.get("--metrics");
  if (args.has("--save") && save_path.empty()) throw UsageError("--save needs a file name");
  if (!metrics_path.empty() &&
      !(metrics_path.size() > 4 && (metrics_path.rfind(".csv") == metrics_path.size() - 4 ||
                                    metrics_path.rfind(".jsonl") == metrics_path.size() - 6)))
    throw UsageError("--metrics must name a .csv or .jsonl file, got '" + metrics_path + "'");
  const DeviceInfo device = select_device_or_usage_error(args);

  const data::DataSplits splits = data::load_folder(args.get("--data"), load);
  RuntimeOptions rt_options;
  rt_options.device_spec = std::to_string(device.index);
  Runtime rt(rt_options);
  Sequential model(splits.train.features());
  for (size_t units : hidden) {
    model.dense(units, activation, init);
    if (dropout > 0.f) model.dropout(dropout);
  }
  model.dense(splits.train.num_classes, Activation::linear, init);
  std::unique_ptr<Optimizer> optimizer;
  try {
    optimizer = make_optimizer(rt, model.parameter_count(), opt);
  } catch (const ValidationError& e) {
    throw UsageError(std::string("--optimizer/--lr: ") + e.what());
  }
  model.build(rt, train.batch);
  model.initialize(train.seed);

  if (!quiet) {
    fmt::print("device: {} ({}, driver {})\ndata: {} — {} training, {} {} samples, {} classes\n",
               rt.info().name, rt.info().platform_name, rt.info().driver_version, splits.dir,
               splits.train.count, splits.validation.count ? splits.validation.count : splits.test.count,
               splits.validation.count ? "validation" : "test", splits.train.num_classes);
    fmt::print("{}optimizer: {} (lr {}), batch {}, epochs {}, seed {}\n", model.summary(), optimizer->name(),
               optimizer->learning_rate(), train.batch, train.epochs, train.seed);
    std::fflush(stdout);
  }

  const DeviceDataset train_data(rt, splits.train), test_data(rt, splits.test);
  std::unique_ptr<DeviceDataset> val_data;
  if (splits.validation.count) val_data = std::make_unique<DeviceDataset>(rt, splits.validation);
  gemm_warmup(
      rt,
      {{Trans::no, Trans::no}, {Trans::yes, Trans::no}, {Trans::no, Trans::yes}});  // compile before timing

  const bool live = !quiet && isatty(STDERR_FILENO);
  train.progress_interval_s = live ? 0.25 : 0.0;
  ProgressDisplay display(live, quiet);
  std::unique_ptr<MetricsFile> metrics;
  if (!metrics_path.empty()) metrics = std::make_unique<MetricsFile>(metrics_path);
  Trainer trainer(model, *optimizer, train);
  trainer.on_progress = [&](const Progress& p) { display.progress(p); };
  trainer.on_epoch_end = [&](const EpochStats& s) {
    display.epoch_end(s, train.epochs);
    if (metrics) metrics->write(s);
  };
  trainer.fit(train_data, val_data ? val_data.get() : &test_data, val_data ? "val" : "test");
  const EvalStats test = trainer.evaluate(test_data);
  fmt::print("Test loss: {:.4f} - Test accuracy: {:.4f}\n", test.loss, test.accuracy);
  if (!quiet) {
    const RuntimeCounters& c = trainer.step_counters();
    const double steps = double(trainer.steps_done());
    fmt::print(
        "per training step: {:.1f} anycl kernel launches + {:.1f} CLBlast GEMM calls, {:.1f} blocking host "
        "waits\n",
        double(c.kernel_launches) / steps, double(c.gemm_calls) / steps, double(c.host_waits) / steps);
  }
  if (!save_path.empty()) {
    save_model(save_path, model, splits.train.num_classes);
    if (!quiet) fmt::print("model saved to {}\n", save_path);
  }
  return 0;
}

}  // namespace anycl::cli
