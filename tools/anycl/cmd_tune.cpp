// `anycl tune`: runs CLBlast's GEMM tuners for the selected device at the reference model's
// shapes and stores the parameters where every later Runtime on that device applies them.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>

#include "anycl/blas/tuning.hpp"
#include "anycl/error.hpp"
#include "anycl/nn/model_from_flags.hpp"
#include "args.hpp"
#include "child_process.hpp"
#include "commands.hpp"
#include "device_flag.hpp"
#include "tuning_check.hpp"

namespace anycl::cli {

namespace {

// One stage in this process (the child side of `anycl tune`): continues from `file`, stores there.
int run_stage(const DeviceInfo& device, const std::string& stage, const std::string& file,
              TuneOptions options) {
  RuntimeOptions rt_options;
  rt_options.device_spec = std::to_string(device.index);
  Runtime rt(rt_options);
  if (auto earlier = load_tuning(file)) options.earlier = *earlier;
  options.stages = {stage};
  options.progress = [](const std::string& line) {
    fmt::print("{}\n", line);
    std::fflush(stdout);
  };
  options.stage_done = [&](const GemmTuning& so_far) { save_tuning(file, so_far); };
  try {
    tune_gemm(rt, options);
  } catch (const ValidationError& e) {
    throw UsageError(std::string("--stage: ") + e.what());
  }
  return 0;
}

}  // namespace

int run_tune(int argc, char** argv) {
  const Args args(argc, argv, 2,
                  {"--device", "--fraction", "--indirect-fraction", "--stage", "--into", "--layers",
                   "--features", "--classes", "--batch", "--check", "--model"},
                  {"--show", "--reset", "--help", "--in-this-process", "--export"});
  if (args.has("--help")) {
    fmt::print(
        "usage: anycl tune [--show] [--reset] [--device SPEC] [--fraction F] [--indirect-fraction F]\n"
        "                  [--model mlp|cnn] [--layers LIST] [--features N] [--classes N] [--batch N]\n"
        "  Tunes CLBlast's GEMM kernels (XgemmDirect, Xgemm and the direct/indirect switch) for the\n"
        "  device at the shapes of the model `anycl train` would build from the same --model, --layers\n"
        "  (default 512,512), --features (default 784; a square is taken as square 1-channel images, so\n"
        "  convolution layers fit), --classes (default 10) and --batch (default 128), and\n"
        "  stores the parameters in a per-device file in the cache folder; every later start on this\n"
        "  device (same driver) applies them.\n"
        "  --show          print the stored parameters for the device, tune nothing\n"
        "  --export        print the stored parameters as an entry of anycl's tuning database\n"
        "                  (tuning/*.txt; see docs/benchmarks.md) to contribute, tune nothing\n"
        "  --reset         remove the stored parameters (CLBlast's defaults apply again)\n"
        "  --fraction F    share of XgemmDirect's search space to try, in (0, 1] (default 0.02)\n"
        "  --indirect-fraction F  share of the Xgemm (indirect kernel) GEMMK=0 space anycl times through "
        "the\n"
        "                  GEMM routine at the model's shapes (default 0.0002, at least 8 sets)\n"
        "  --stage NAME    run one stage (XgemmDirect, Xgemm or GemmRoutine) in this process\n"
        "  --into FILE     with --stage: the tuning file to continue and write (default: the device's)\n"
        "  --check FILE    check the CLBlast parameters in a tuning file on the device (exact GEMMs at the\n"
        "                  model's shapes), in a child process: a driver crash refuses them; tunes nothing\n"
        "  Each stage runs in its own process and is stored as soon as it finishes, so a crash inside\n"
        "  CLBlast's tuner or an interruption loses one stage; the next `anycl tune` continues with the\n"
        "  missing stages (`--reset` starts over). A complete earlier tuning stays until a new one is.\n"
        "  Takes minutes on a CPU device (PoCL); ANYCL_TUNING=off ignores a stored file. Without a file of\n"
        "  its own, a device gets the matching entry of the tuning database shipped with anycl, once it\n"
        "  passed the exact GEMM check (ANYCL_TUNING_DATABASE=off: CLBlast's defaults instead).\n");
    return 0;
  }
  if (!args.positional().empty()) throw UsageError("unexpected argument '" + args.positional().front() + "'");
  if (args.has("--into") && !args.has("--stage"))
    throw UsageError(
        "--into goes with --stage (it names the file one stage writes); `anycl tune` alone tunes "
        "every stage into the device's tuning file");
  TuneOptions options;
  ModelFlags model;
  const std::string preset = args.get("--model", "mlp");
  if (preset != "mlp" && preset != "cnn")
    throw UsageError("--model must be mlp or cnn, got '" + preset + "' (other shapes: --layers)");
  model.layers = args.get("--layers", preset == "cnn" ? kReferenceCnnLayers : "512,512");
  const size_t features = size_t(args.get_int("--features", 784, 1, 1 << 24));
  const size_t classes = size_t(args.get_int("--classes", 10, 1, 1 << 24));
  const size_t batch = size_t(args.get_int("--batch", 128, 1, 1 << 20));
  // Square single-channel images when --features is a square (784: 28×28, as the default data set),
  // so convolution layers fit; a flat input otherwise.
  const auto side = size_t(std::lround(std::sqrt(double(features))));
  const Shape input = side * side == features ? Shape{1, side, side} : Shape{features};
  try {
    options.shapes = model_gemm_shapes(Sequential(model_from_flags(model, input, classes)), batch);
  } catch (const ValidationError& e) {
    throw UsageError(e.what());  // names the flag
  }
  options.fraction = args.get_double("--fraction", options.fraction, 1e-6, 1.0);
  options.indirect_fraction = args.get_double("--indirect-fraction", options.indirect_fraction, 1e-6, 1.0);
  const DeviceInfo device = select_device_or_usage_error(args);
  const std::string path = tuning_file_path(device);
  if (path.empty())
    throw Error(
        "the cache is off (ANYCL_CACHE=off), so there is nowhere to store tuning — unset ANYCL_CACHE");

  if (args.has("--reset")) {
    std::error_code ec;
    const bool removed = std::filesystem::remove(path, ec);
    if (ec) throw Error(fmt::format("cannot remove {}: {} — check its permissions", path, ec.message()));
    fmt::print("{} {}\n", removed ? "removed" : "no tuning stored at", path);
    return 0;
  }
  if (args.has("--export")) {
    std::string why;
    const auto t = load_tuning(path, &why);
    if (!t)
      throw Error(fmt::format("{}: nothing to export ({}) — run `anycl tune` on this device first",
                              device.name, why));
    fmt::print("{}", database_entry(*t, device));
    return 0;
  }
  if (args.has("--show")) {
    std::string why;
    const auto t = load_tuning(path, &why);
    if (!t) {
      std::string entry;
      if (database_tuning(device, &entry))
        fmt::print(
            "{}: no tuning of its own ({}); anycl's tuning database entry {} applies once it passes the "
            "exact GEMM check — run `anycl tune` to tune locally\n",
            device.name, why, entry);
      else
        fmt::print("{}: no usable tuning ({}); CLBlast's defaults apply — run `anycl tune`\n", device.name,
                   why);
      return 0;
    }
    fmt::print("{} (driver {}), tuned in {:.0f} s — {}\n", t->device, t->driver, t->seconds, path);
    for (const auto& [name, params] : t->kernels) {
      fmt::print("  {:<12}", name);
      for (const auto& [k, v] : params) fmt::print(" {}={}", k, v);
      fmt::print("\n");
    }
    return 0;
  }

  if (args.has("--check")) {
    if (args.has("--in-this-process")) return check_tuning_here(device, args.get("--check"));
    std::string why;
    const auto tuning = load_tuning(args.get("--check"), &why);
    if (!tuning) throw UsageError("--check: " + why);
    const std::string refused = contained_tuning_mismatch(device, *tuning);
    if (!refused.empty()) throw Error(refused + " — do not store these parameters");
    fmt::print("exact on {} (driver {}): {}\n", device.name, device.driver_version,
               describe_parameters(*tuning));
    return 0;
  }
  if (args.has("--stage")) return run_stage(device, args.get("--stage"), args.get("--into", path), options);

  // Each stage runs in a child process: CLBlast's tuners run candidate kernels that may crash the
  // process (on a CPU device a bad candidate can write outside its buffers), and a crash must cost
  // one stage, not the run. A complete earlier tuning stays in use until a new one is complete.
  const auto existing = load_tuning(path);
  const bool restart = !existing || tuning_complete(*existing);
  const std::string work = restart && existing ? path + ".new" : path;
  std::error_code ignored;
  if (work != path) std::filesystem::remove(work, ignored);
  fmt::print("tuning CLBlast SGEMM for {} (driver {}); each stage runs in its own process\n", device.name,
             device.driver_version);
  if (!restart)
    fmt::print("continuing the interrupted tuning stored in {} (`anycl tune --reset` starts over)\n", path);
  std::vector<std::string> failed;
  for (const char* stage : kTuningStages) {
    ProcessSpec child;
    child.args = {this_executable(),
                  "tune",
                  "--device",
                  std::to_string(device.index),
                  "--fraction",
                  fmt::format("{}", options.fraction),
                  "--indirect-fraction",
                  fmt::format("{}", options.indirect_fraction),
                  "--layers",
                  model.layers,
                  "--features",
                  fmt::format("{}", features),
                  "--classes",
                  fmt::format("{}", classes),
                  "--batch",
                  fmt::format("{}", batch),
                  "--stage",
                  stage,
                  "--into",
                  work};
    const ChildExit exit = run_passthrough(child);
    if (exit.signal == SIGINT || exit.signal == SIGTERM) {
      fmt::print(stderr,
                 "anycl tune: interrupted in stage {}; the finished stages are stored in {} — run `anycl "
                 "tune` again to continue\n",
                 stage, work);
      return 128 + exit.signal;
    }
    if (!exit.ok()) {
      failed.push_back(fmt::format("{} ({})", stage, exit.describe()));
      fmt::print(stderr,
                 "anycl tune: stage {} failed ({}) on {} (driver {}); the parameters it was trying are "
                 "printed above and were not stored; going on with the next stage\n",
                 stage, exit.describe(), device.name, device.driver_version);
    }
  }
  const auto result = load_tuning(work);
  if (work != path) {
    if (result && tuning_complete(*result)) {
      std::filesystem::rename(work, path);
    } else {
      std::filesystem::remove(work, ignored);
      fmt::print(stderr,
                 "anycl tune: the new tuning is incomplete, so the earlier complete one in {} stays in use\n",
                 path);
    }
  }
  if (!failed.empty())
    throw Error(fmt::format(
        "tuning stage(s) failed: {}. The other stages are stored and CLBlast's defaults apply to the failed "
        "ones. A stage fails when CLBlast's tuner or the OpenCL driver crashes, or when the parameters it "
        "found compute wrong results (said above); run `anycl tune` again to retry only the missing stages",
        fmt::join(failed, ", ")));
  fmt::print("tuned in {:.0f} s; stored in {} (`anycl tune --show` lists it, `--reset` removes it)\n",
             result ? result->seconds : 0.0, path);
  return 0;
}

}  // namespace anycl::cli
