// `anycl train`: the reference MLP (or one described by the flags) trained on an MNIST-format
// data set on the selected device, with per-epoch metrics, an optional metrics file and model.
#include <fmt/format.h>

#include <set>
#include <sstream>

#include "anycl/error.hpp"
#include "anycl/nn/model_from_flags.hpp"
#include "anycl/util/atomic_file.hpp"
#include "args.hpp"
#include "commands.hpp"
#include "device_flag.hpp"
#include "train_run.hpp"

namespace anycl::cli {
namespace {

constexpr const char* kUsage =
    "usage: anycl train [flags]\n"
    "  Trains a model (default: Keras' mnist_mlp, 784-512-512-10, ReLU, dropout 0.2, RMSprop) on an\n"
    "  MNIST-format folder and reports loss and accuracy per epoch.\n"
    "  --data DIR              data set folder (default $ANYCL_DATA or /usr/share/datasets/fashion-mnist)\n"
    "  --device SPEC           device (index, p:d, gpu, cpu, vendor or name part; default: best)\n"
    "  --epochs N              epochs (default 20)\n"
    "  --batch N               batch size (default 128)\n"
    "  --model mlp|cnn|bncnn   the reference MLP (default), Keras' mnist_cnn (conv 32, conv 64, pool,\n"
    "                          dense 128; Adam) or the BatchNorm CNN (conv -> bn -> relu blocks,\n"
    "                          global average pooling; Adam): sets the defaults of --layers,\n"
    "                          --dropout and --optimizer\n"
    "  --layers A,B,...        hidden layer sizes (default 512,512; 'none' for no hidden layer); a\n"
    "                          token dropoutR (e.g. dropout0.25) adds a Dropout of rate R there; image\n"
    "                          layers: convFxK[sS][same] (conv32x3), poolN[sS] (pool2), avgpoolN[sS],\n"
    "                          globalavgpool, globalmaxpool, bn[MOMENTUM[_EPSILON]] (BatchNormalization),\n"
    "                          flatten\n"
    "                          A size, conv or bn token may end in :ACTIVATION, its own activation\n"
    "                          (64:tanh, conv32x3:linear, bn:relu; plain bn is linear)\n"
    "  --activation NAME       relu, tanh, sigmoid, leaky_relu, elu, gelu or linear (default relu)\n"
    "  --init NAME             glorot_uniform or he_uniform (default glorot_uniform)\n"
    "  --dropout RATE          dropout after each hidden layer, in [0, 1) (default 0.2)\n"
    "  --optimizer NAME        sgd, momentum, nesterov, rmsprop, adam, adamw (default rmsprop)\n"
    "  --lr RATE               learning rate (default 0.001; 0.01 for the SGD family)\n"
    "  --lr-schedule SPEC      Keras' learning-rate schedules, from --lr (step: from its values):\n"
    "                          exponential:decay_steps=N,decay_rate=R[,staircase=1]   (ExponentialDecay)\n"
    "                          cosine:decay_steps=N[,alpha=A][,warmup_target=T,warmup_steps=W]\n"
    "                          (CosineDecay; with T it first rises linearly from --lr, 0 if not given,\n"
    "                          to T over W steps, then decays from T over N more)\n"
    "                          'step:boundaries=S1,S2;values=R0,R1,R2' (PiecewiseConstantDecay; quote the "
    ";)\n"
    "                          plateau[:patience=10,factor=0.1,min_delta=1e-4,cooldown=0,min_lr=0,\n"
    "                          monitor=val_loss|loss] (ReduceLROnPlateau at epoch ends; val_loss needs\n"
    "                          --validation-split, and is the default with it, else loss)\n"
    "                          Steps count from the run's start; each epoch line shows its rate\n"
    "  --seed N                seed for weights, dropout and shuffling (default 1)\n"
    "  --limit N               train on the first N training samples only\n"
    "  --validation-split F    hold out the last fraction F of the training set for validation\n"
    "  --classes N             the class count (default: the largest training label + 1, and every\n"
    "                          class must then have a training sample)\n"
    "  --save FILE             write the trained model (.anycl) when training ends\n"
    "  --metrics FILE          write per-epoch metrics (.csv or .jsonl)\n"
    "  --plot FILE             draw the learning curves (loss and accuracy per epoch) as an SVG\n"
    "  --profile FILE          write the device timeline (every kernel and GEMM, named, from OpenCL\n"
    "                          profiling events; host phases) as Chrome trace JSON: open it in Perfetto\n"
    "  --checkpoint DIR        write a checkpoint into DIR at each epoch end (and on SIGINT/SIGTERM)\n"
    "  --checkpoint-every N    also every N training steps\n"
    "  --resume DIR            continue the run checkpointed in DIR: data, model, optimizer, batch, seed,\n"
    "                          epochs, devices and split come from the checkpoint (--epochs, --lr,\n"
    "                          --device, --devices may be given again); outputs (--save, --metrics,\n"
    "                          --plot) only from this command line. Bit-identical to an uninterrupted\n"
    "                          run on the same device(s)\n"
    "  --max-steps N           stop after N training steps of this run (then evaluate, save and\n"
    "                          checkpoint as usual; a --resume counts from where it resumes)\n"
    "  --quiet                 print only the final result\n"
    "  --no-autotune           no first-use tuning (also ANYCL_AUTOTUNE=off): where the device has neither\n"
    "                          an `anycl tune` file nor a specific tuning database entry, training first\n"
    "                          measures a shortlist of CLBlast parameter sets at the model's GEMMs (about "
    "two\n"
    "                          minutes on a CPU, once per device and driver) and keeps the fastest exact "
    "one;\n"
    "                          a GPU keeps CLBlast's own GPU database unless ANYCL_AUTOTUNE=on\n"
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
  const std::set<std::string> value_flags = {
      "--data",       "--device",     "--epochs",           "--batch",     "--layers",
      "--activation", "--init",       "--dropout",          "--optimizer", "--lr",
      "--seed",       "--limit",      "--validation-split", "--classes",   "--save",
      "--metrics",    "--checkpoint", "--checkpoint-every", "--resume",    "--plot",
      "--devices",    "--split",      "--max-steps",        "--model",     "--profile",
      "--lr-schedule"};
  const std::set<std::string> switches = {"--quiet", "--help", "--distributed", "--no-autotune"};
  const Args args(argc, argv, 2, value_flags, switches);
  if (args.has("--help")) return fmt::print("{}", kUsage), 0;
  if (!args.positional().empty()) throw UsageError("unexpected argument '" + args.positional().front() + "'");

  // Every flag is checked before anything slow happens.
  TrainRequest r;
  for (const auto& flag : value_flags)
    if (args.has(flag)) r.given.insert(flag);
  r.train.epochs = size_t(args.get_int("--epochs", 20, 1, 1000000));
  r.train.batch = size_t(args.get_int("--batch", 128, 1, 1ll << 31));
  r.train.seed = uint64_t(args.get_int("--seed", 1, 0, (1ll << 62)));
  const std::string preset = args.get("--model", "mlp");
  if (preset != "mlp" && preset != "cnn" && preset != "bncnn")
    throw UsageError("--model must be mlp, cnn or bncnn, got '" + preset + "' (other shapes: --layers)");
  const bool cnn = preset != "mlp";
  r.model.layers = args.get("--layers", preset == "bncnn" ? kBatchNormCnnLayers
                                        : cnn             ? kReferenceCnnLayers
                                                          : "512,512");
  r.model.activation =
      as_usage_error("--activation", [&] { return parse_activation(args.get("--activation", "relu")); });
  r.model.init = as_usage_error("--init", [&] { return parse_init(args.get("--init", "glorot_uniform")); });
  r.model.dropout = float(args.get_double("--dropout", cnn ? 0.0 : 0.2, 0.0, 0.999999));
  try {  // checked now, before anything slow (the data's sizes complete the model later)
    model_from_flags(r.model, 1, 1);
  } catch (const ValidationError& e) {
    throw UsageError(e.what());  // names the flag
  }
  r.optimizer.name = args.get("--optimizer", cnn ? "adam" : "rmsprop");
  r.optimizer.lr = float(args.get_double("--lr", 0.0, 1e-12, 10.0));
  try {
    r.train.schedule = parse_schedule(args.get("--lr-schedule", "constant"));
  } catch (const ValidationError& e) {
    throw UsageError(fmt::format("--lr-schedule '{}': {}", args.get("--lr-schedule"), e.what()));
  }
  r.load.limit = size_t(args.get_int("--limit", 0, 1, 1ll << 40));
  r.load.validation_split = args.get_double("--validation-split", 0.0, 0.0, 0.99);
  r.load.num_classes = size_t(args.get_int("--classes", 0, 2, 256));
  r.train.max_steps = uint64_t(args.get_int("--max-steps", 0, 1, 1ll << 62));
  r.quiet = args.has("--quiet");
  r.autotune = !args.has("--no-autotune");
  r.save_path = args.get("--save");
  r.metrics_path = args.get("--metrics");
  r.plot_path = args.get("--plot");
  r.profile_path = args.get("--profile");
  if (args.has("--profile") && r.profile_path.empty()) throw UsageError("--profile needs a file name");
  if (args.has("--save") && r.save_path.empty()) throw UsageError("--save needs a file name");
  if (args.has("--plot") && r.plot_path.empty()) throw UsageError("--plot needs a file name");
  const std::string& m = r.metrics_path;
  if (!m.empty() && !(m.size() > 4 && (m.rfind(".csv") == m.size() - 4 || m.rfind(".jsonl") == m.size() - 6)))
    throw UsageError("--metrics must name a .csv or .jsonl file, got '" + m + "'");
  for (const char* output :
       {"--save", "--metrics", "--plot", "--profile"})  // before any work, not after training
    if (!args.get(output).empty()) check_output_file(args.get(output));
  r.checkpoint_dir = args.get("--checkpoint");
  if (args.has("--checkpoint") && r.checkpoint_dir.empty()) throw UsageError("--checkpoint needs a folder");
  r.train.checkpoint_every = size_t(args.get_int("--checkpoint-every", 0, 1, 1ll << 40));
  r.resume = args.get("--resume");
  if (args.has("--resume") && r.resume.empty())
    throw UsageError("--resume needs the folder given to --checkpoint");
  if (r.train.checkpoint_every && r.checkpoint_dir.empty() && r.resume.empty())
    throw UsageError("--checkpoint-every needs --checkpoint DIR (where to write the checkpoints)");
  r.distributed = args.has("--distributed");
  if (args.has("--devices")) r.device_specs = parse_device_list(args.get("--devices"));
  r.device_spec = device_spec(args);
  r.device_from_flag = args.has("--device");
  r.data_dir = args.get("--data");
  r.split = parse_split(args.get("--split", "equal"));
  if (r.train.schedule.monitor == "val_loss" && r.load.validation_split == 0 && r.resume.empty())
    throw UsageError(
        "--lr-schedule plateau:monitor=val_loss needs --validation-split F (anycl train evaluates on the "
        "test "
        "set otherwise, which must not steer training) — add it, or drop monitor=val_loss to monitor loss");
  if (args.has("--split") && !args.has("--devices") && !r.distributed && r.resume.empty())
    throw UsageError(
        "--split shares batches between data-parallel replicas: add --devices LIST or --distributed");
  return run_training(std::move(r));
}

}  // namespace anycl::cli
