// `anycl train`: the reference MLP (or one described by the flags) trained on an MNIST-format
// data set on the selected device, with per-epoch metrics, an optional metrics file and model.
#include <fmt/format.h>
#include <unistd.h>

#include <sstream>

#include "anycl/blas.hpp"
#include "anycl/data/dataset.hpp"
#include "anycl/error.hpp"
#include "anycl/nn/model_from_flags.hpp"
#include "anycl/train/checkpoint.hpp"
#include "anycl/train/metrics_file.hpp"
#include "anycl/train/model_file.hpp"
#include "anycl/train/trainer.hpp"
#include "args.hpp"
#include "commands.hpp"
#include "device_flag.hpp"
#include "learning_curves.hpp"
#include "process_clock.hpp"
#include "progress.hpp"
#include "train_parallel.hpp"
#include "train_resume.hpp"

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
    "  --layers A,B,...        hidden layer sizes (default 512,512; 'none' for no hidden layer); a\n"
    "                          token dropoutR (e.g. dropout0.25) adds a Dropout of rate R there\n"
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
    "  --plot FILE             draw the learning curves (loss and accuracy per epoch) as an SVG\n"
    "  --checkpoint DIR        write a checkpoint into DIR at each epoch end (and on SIGINT/SIGTERM)\n"
    "  --checkpoint-every N    also every N training steps\n"
    "  --resume DIR            continue the run checkpointed in DIR (same flags; --epochs, --lr, --save,\n"
    "                          --metrics, --device, --devices may be given again); bit-identical to an\n"
    "                          uninterrupted run on the same device(s)\n"
    "  --max-steps N           stop after N training steps of this run (then evaluate, save and\n"
    "                          checkpoint as usual; a --resume counts from where it resumes)\n"
    "  --quiet                 print only the final result\n"
    "  --devices LIST|all      data-parallel over several devices of this machine (e.g. 0,1 or all)\n"
    "  --distributed           data-parallel over MPI processes: mpirun -np N anycl train --distributed …\n"
    "                          (both split each --batch over the replicas; --checkpoint and --resume work\n"
    "                          as on one device: rank 0 writes, every rank reads, and a checkpoint of one\n"
    "                          device resumes on several with the same --batch and vice versa)\n"
    "  --split equal|auto|W1:W2…  with --devices/--distributed: each device's share of a batch (default\n"
    "                          equal); auto measures the devices' speeds and prints the shares (the result\n"
    "                          then depends on timing: repeat a run exactly with the printed --split)\n";

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
  // With --resume DIR, the flags recorded in the checkpoint come first and these override them.
  std::vector<std::string> arguments = resolve_resume(argc, argv);
  std::vector<char*> arg_ptrs;
  for (auto& a : arguments) arg_ptrs.push_back(a.data());
  const Args args(int(arg_ptrs.size()), arg_ptrs.data(), 2,
                  {"--data",
                   "--device",
                   "--epochs",
                   "--batch",
                   "--layers",
                   "--activation",
                   "--init",
                   "--dropout",
                   "--optimizer",
                   "--lr",
                   "--seed",
                   "--limit",
                   "--validation-split",
                   "--save",
                   "--metrics",
                   "--checkpoint",
                   "--checkpoint-every",
                   "--resume",
                   "--plot",
                   "--devices",
                   "--split",
                   "--max-steps"},
                  {"--quiet", "--help", "--distributed"});
  if (args.has("--help")) return fmt::print("{}", kUsage), 0;
  if (!args.positional().empty()) throw UsageError("unexpected argument '" + args.positional().front() + "'");

  // Every flag is checked before anything slow happens.
  TrainOptions train;
  train.epochs = size_t(args.get_int("--epochs", 20, 1, 1000000));
  train.batch = size_t(args.get_int("--batch", 128, 1, 1ll << 31));
  train.seed = uint64_t(args.get_int("--seed", 1, 0, (1ll << 62)));
  ModelFlags model_flags;
  model_flags.activation =
      as_usage_error("--activation", [&] { return parse_activation(args.get("--activation", "relu")); });
  model_flags.init =
      as_usage_error("--init", [&] { return parse_init(args.get("--init", "glorot_uniform")); });
  model_flags.dropout = float(args.get_double("--dropout", 0.2, 0.0, 0.999999));
  model_flags.layers = args.get("--layers", "512,512");
  // Checked now, before anything slow (the data's sizes complete the model later).
  try {
    model_from_flags(model_flags, 1, 1);
  } catch (const ValidationError& e) {
    throw UsageError(e.what());  // names the flag
  }
  OptimizerConfig opt;
  opt.name = args.get("--optimizer", "rmsprop");
  opt.lr = float(args.get_double("--lr", 0.0, 1e-12, 10.0));
  data::LoadOptions load;
  load.limit = size_t(args.get_int("--limit", 0, 1, 1ll << 40));
  load.validation_split = args.get_double("--validation-split", 0.0, 0.0, 0.99);
  train.max_steps = uint64_t(args.get_int("--max-steps", 0, 1, 1ll << 62));
  const bool quiet = args.has("--quiet");
  const std::string save_path = args.get("--save"), metrics_path = args.get("--metrics");
  if (args.has("--save") && save_path.empty()) throw UsageError("--save needs a file name");
  if (!metrics_path.empty() &&
      !(metrics_path.size() > 4 && (metrics_path.rfind(".csv") == metrics_path.size() - 4 ||
                                    metrics_path.rfind(".jsonl") == metrics_path.size() - 6)))
    throw UsageError("--metrics must name a .csv or .jsonl file, got '" + metrics_path + "'");
  const std::string checkpoint_dir = args.get("--checkpoint");
  if (args.has("--checkpoint") && checkpoint_dir.empty()) throw UsageError("--checkpoint needs a folder");
  train.checkpoint_every = size_t(args.get_int("--checkpoint-every", 0, 1, 1ll << 40));
  if (train.checkpoint_every && checkpoint_dir.empty())
    throw UsageError("--checkpoint-every needs --checkpoint DIR (where to write the checkpoints)");
  if (args.has("--devices") || args.has("--distributed")) {
    ParallelTrainRequest request;
    if (args.has("--devices")) request.device_specs = parse_device_list(args.get("--devices"));
    request.device_spec = args.get("--device");
    request.distributed = args.has("--distributed");
    request.data_dir = args.get("--data");
    request.load = load;
    request.train = train;
    request.optimizer = opt;
    request.model = model_flags;
    request.quiet = quiet;
    request.save_path = save_path;
    request.metrics_path = metrics_path;
    request.plot_path = args.get("--plot");
    request.split = parse_split(args.get("--split", "equal"));
    request.checkpoint_dir = checkpoint_dir;
    request.resume = args.has("--resume");
    request.arguments = arguments;
    return train_data_parallel(request);
  }
  if (args.has("--split"))
    throw UsageError(
        "--split shares batches between data-parallel replicas: add --devices LIST or --distributed");
  const DeviceInfo device = select_device_or_usage_error(args);

  const data::DataSplits splits = data::load_folder(args.get("--data"), load);
  const double data_loaded_at = seconds_since_process_start();
  RuntimeOptions rt_options;
  rt_options.device_spec = std::to_string(device.index);
  Runtime rt(rt_options);
  const double runtime_ready_at = seconds_since_process_start();
  Sequential model(model_from_flags(model_flags, splits.train.features(), splits.train.num_classes));
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
  if (!checkpoint_dir.empty()) {
    create_checkpoint_folder(checkpoint_dir);
    train.checkpoint_path = checkpoint_file(checkpoint_dir);
    train.checkpoint_app = recorded_flags(arguments, splits.dir);
  }
  train.stop = &install_stop_handlers();
  Trainer trainer(model, *optimizer, train);
  if (args.has("--resume")) {
    trainer.resume_from(train.checkpoint_path);
    if (!quiet)
      fmt::print("resuming from {} at epoch {}, step {} (global step {})\n", train.checkpoint_path,
                 trainer.epochs_done() + 1, trainer.step_in_epoch(), trainer.steps_done());
    for (const EpochStats& s : trainer.history()) {
      display.epoch_end(s, train.epochs);
      if (metrics) metrics->write(s);
    }
  }
  trainer.on_progress = [&](const Progress& p) { display.progress(p); };
  trainer.on_epoch_end = [&](const EpochStats& s) {
    display.epoch_end(s, train.epochs);
    if (metrics) metrics->write(s);
  };
  const double training_started_at = seconds_since_process_start();
  try {
    trainer.fit(train_data, val_data ? val_data.get() : &test_data, val_data ? "val" : "test");
  } catch (const Error& e) {
    throw with_resume_hint(e, train.checkpoint_path, checkpoint_dir);
  }
  if (trainer.stopped() && train.stop->load())
    return report_stop(train.checkpoint_path, checkpoint_dir, trainer.epochs_done(), trainer.step_in_epoch());
  if (args.has("--plot"))  // all epochs, resumed ones included
    write_learning_curves_svg(args.get("--plot"), learning_curves(trainer.history()),
                              fmt::format("anycl train — {}", splits.dir));
  const EvalStats test = trainer.evaluate(test_data);
  fmt::print("Test loss: {:.4f} - Test accuracy: {:.4f}\n", test.loss, test.accuracy);
  if (!quiet) {
    const RuntimeCounters& c = trainer.step_counters();
    const double steps = double(trainer.steps_done());
    fmt::print(
        "per training step: {:.1f} anycl kernel launches + {:.1f} CLBlast GEMM calls{}, {:.1f} blocking host "
        "waits\n",
        double(c.kernel_launches) / steps, double(c.gemm_calls) / steps,
        c.transposes ? fmt::format(" + {:.1f} CLBlast transposes", double(c.transposes) / steps) : "",
        double(c.host_waits) / steps);
    if (trainer.stopped()) fmt::print("stopped after {} training steps (--max-steps)\n", train.max_steps);
    if (const auto first = trainer.first_step_finished())
      fmt::print(
          "start-up: first training step finished {:.3f} s after the process started (data loaded at {:.3f} "
          "s, "
          "runtime ready at {:.3f} s, training started at {:.3f} s)\n",
          process_seconds_at(*first), data_loaded_at, runtime_ready_at, training_started_at);
  }
  if (!save_path.empty()) {
    save_model(save_path, model, splits.train.num_classes);
    if (!quiet) fmt::print("model saved to {}\n", save_path);
  }
  return 0;
}

}  // namespace anycl::cli
