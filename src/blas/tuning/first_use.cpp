// First-use tuning (anycl/blas/tune.hpp): on a device with neither a tuning of its own nor a
// specific entry of the tuning database, `anycl train` and Python's `fit` first run a quick tune()
// at the model's GEMM shapes (about 95 s of shortlists on a 2-core CPU, then a confirmation in turn
// with the entry where a set beat it: seconds to a minute; once per device and driver; less when the first
// third of each shortlist holds nothing 5 % faster than the generic entry). Opt out with ANYCL_AUTOTUNE=off
// (or --no-autotune, fit(autotune=False)). GPUs are left to CLBlast's own database unless ANYCL_AUTOTUNE=on:
// on an NVIDIA H200 the shortlist (sets tuned for CPUs, CLBlast's own first) found nothing faster than
// CLBlast's sets (docs/dev/performance-log.md).
#include "anycl/blas/tune.hpp"
#include "util/platform.hpp"

namespace anycl {

std::string first_use_tuning_skipped(const DeviceInfo& device) {
  for (const char* variable : {"ANYCL_AUTOTUNE", "ANYCL_TUNING"}) {
    const std::string value = detail::platform::get_env(variable).value_or("");
    if (value == "off" || value == "0") return variable + std::string("=") + value;
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

std::optional<TuneReport> tune_on_first_use(Runtime& rt, const std::vector<GemmShape>& shapes,
                                            const std::function<bool(const TuneProgress&)>& progress,
                                            std::string* skipped) {
  const std::string why = first_use_tuning_skipped(rt.info());
  if (skipped) *skipped = why;
  if (!why.empty()) return std::nullopt;
  TuneSettings settings;
  settings.quick = true;
  settings.shapes = shapes;
  settings.progress = progress;
  return tune(rt, settings);
}

}  // namespace anycl
