// `anycl tune`: runs CLBlast's GEMM tuners for the selected device at the reference model's
// shapes and stores the parameters where every later Runtime on that device applies them.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "anycl/error.hpp"
#include "anycl/tuning.hpp"
#include "args.hpp"
#include "commands.hpp"
#include "device_flag.hpp"

namespace anycl::cli {

int run_tune(int argc, char** argv) {
  const Args args(argc, argv, 2, {"--device", "--fraction"}, {"--show", "--reset", "--help"});
  if (args.has("--help")) {
    fmt::print(
        "usage: anycl tune [--show] [--reset] [--device SPEC] [--fraction F]\n"
        "  Tunes CLBlast's GEMM kernels (XgemmDirect, Xgemm and the direct/indirect switch) for the\n"
        "  device at the reference model's shapes and stores the parameters in a per-device file in\n"
        "  the cache folder; every later start on this device (same driver) applies them.\n"
        "  --show          print the stored parameters for the device, tune nothing\n"
        "  --reset         remove the stored parameters (CLBlast's defaults apply again)\n"
        "  --fraction F    share of each search space to try, in (0, 1] (default 0.02; more is slower)\n"
        "  Takes minutes on a CPU device (PoCL); ANYCL_TUNING=off ignores a stored file.\n");
    return 0;
  }
  if (!args.positional().empty()) throw UsageError("unexpected argument '" + args.positional().front() + "'");
  TuneOptions options;
  options.fraction = args.get_double("--fraction", 0.02, 1e-6, 1.0);
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
  if (args.has("--show")) {
    std::string why;
    const auto t = load_tuning(path, &why);
    if (!t) {
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

  RuntimeOptions rt_options;
  rt_options.device_spec = std::to_string(device.index);
  Runtime rt(rt_options);
  fmt::print("tuning CLBlast SGEMM for {} (driver {}), fraction {}\n", rt.info().name,
             rt.info().driver_version, options.fraction);
  std::fflush(stdout);
  options.progress = [](const std::string& line) {
    fmt::print("{}\n", line);
    std::fflush(stdout);
  };
  const GemmTuning t = tune_gemm(rt, options);
  save_tuning(path, t);
  fmt::print("tuned in {:.0f} s; stored in {} (`anycl tune --show` lists it, `--reset` removes it)\n",
             t.seconds, path);
  return 0;
}

}  // namespace anycl::cli
