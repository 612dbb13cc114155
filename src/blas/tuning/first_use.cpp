// First-use tuning before training (see the header): one child `anycl tune --quick` per device.
#include "blas/tuning/first_use.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <set>

#include "blas/tuning/tune_worker.hpp"
#include "child_process.hpp"
#include "util/platform.hpp"

namespace anycl::cli {

std::string first_use_tuning_skipped(const DeviceInfo& device) {
  for (const char* variable : {"ANYCL_AUTOTUNE", "ANYCL_TUNING"}) {
    const std::string value = detail::platform::get_env(variable).value_or("");
    if (value == "off" || value == "0") return fmt::format("{}={}", variable, value);
  }
  const std::string path = tuning_file_path(device);
  if (path.empty()) return "the cache is off (ANYCL_CACHE=off): nowhere to store a tuning";
  if (load_tuning(path)) return "tuned before: " + path;
  std::string entry;
  bool generic = false;
  if (database_tuning(device, &entry, &generic) && !generic) return "anycl's tuning database has " + entry;
  if (device.type == DeviceType::gpu && detail::platform::get_env("ANYCL_AUTOTUNE").value_or("") != "on")
    return kGpuUsesClblastDatabase;
  return "";
}

void run_first_use_tuning(const std::vector<Runtime*>& runtimes, const std::vector<GemmShape>& shapes,
                          bool quiet) {
  std::set<size_t> done;
  for (Runtime* rt : runtimes) {
    const DeviceInfo& device = rt->info();
    if (!done.insert(device.index).second) continue;
    if (const std::string why = first_use_tuning_skipped(device); !why.empty()) {
      if (why == kGpuUsesClblastDatabase && !quiet)
        fmt::print("{}: no first-use tuning, {}\n", device.name, why);
      continue;
    }
    if (!quiet)
      fmt::print(
          "first use of {} (driver {}) without a tuning: measuring a shortlist of CLBlast parameter sets at "
          "this model's GEMMs (about two minutes, once per device and driver; --no-autotune or "
          "ANYCL_AUTOTUNE=off skips it)\n",
          device.name, device.driver_version);
    std::fflush(stdout);
    ProcessSpec child;
    child.args = {
        this_executable(),    "tune", "--quick", "--device", std::to_string(device.index), "--shapes",
        format_shapes(shapes)};
    std::string output;
    const ChildExit exit = quiet ? run_captured(child, output) : run_passthrough(child);
    std::string why;
    const auto tuning = load_tuning(tuning_file_path(device), &why);
    if (!exit.ok() || !tuning) {
      fmt::print(stderr,
                 "anycl train: first-use tuning failed on {} ({}{}); training goes on with the parameters it "
                 "had — `anycl tune` retries it\n{}",
                 device.name, exit.describe(), tuning ? "" : "; " + why, output);
      continue;
    }
    for (Runtime* other : runtimes)
      if (other->info().index == device.index) apply_tuning(*other, *tuning);
    std::string entry;  // what the tuning was measured against (cmd_tune.cpp): the entry, else CLBlast's own
    const std::string against = database_tuning(device, &entry) ? "the database entry " + entry
                                                                : std::string("CLBlast's own parameters");
    if (!quiet)
      fmt::print(
          "first-use tuning: the model's GEMMs take {:.3f} ms per pass instead of {:.3f} ms with {} "
          "({:.2f}x), found in {:.0f} s; stored for this device and driver\n",
          tuning->seconds_after * 1e3, tuning->seconds_before * 1e3, against,
          tuning->seconds_before / tuning->seconds_after, tuning->seconds);
  }
}

}  // namespace anycl::cli
