// Applying the parameters `anycl tune` stored for a device when a Runtime starts: the GEMM layer's
// half of the seam in stored_tuning.hpp (the runtime itself links no CLBlast).
#include "blas/tuning/stored_tuning.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <optional>

#include "anycl/blas/tuning.hpp"
#include "anycl/error.hpp"
#include "anycl/runtime.hpp"
#include "blas/tuning/tuning_check.hpp"
#include "util/platform.hpp"

namespace anycl::detail {
namespace {

// No `anycl tune` file: the shipped database's entry for this device class, after the exact GEMM
// check (once per device, driver and entry: the verdict is cached). A refused entry costs nothing
// but a log line; CLBlast's defaults stay. ANYCL_TUNING_DATABASE=off skips it (the tests do).
std::string apply_database_tuning(Runtime& rt, const DiskCache* cache,
                                  const std::function<void(const std::string&)>& log) {
  std::string entry;
  std::optional<GemmTuning> tuning;
  try {
    tuning = database_tuning(rt.info(), &entry);
  } catch (const Error& e) {
    log(std::string("tuning database ignored: ") + e.what());
    return "";
  }
  if (!tuning) return "";
  try {
    apply_checked_tuning(rt, *tuning, cache);
    log("CLBlast tuning applied from anycl's tuning database, " + entry);
    return "anycl's tuning database, " + entry;
  } catch (const Error& e) {
    log(fmt::format("tuning database entry {} not used on {}: {}", entry, rt.info().name, e.what()));
  }
  return "";
}

std::string apply_stored_tuning(Runtime& rt, const DiskCache* cache,
                                const std::function<void(const std::string&)>& log) {
  // Parameters from `anycl tune`; a missing file is normal, a bad one is logged and ignored.
  const std::string mode = platform::get_env("ANYCL_TUNING").value_or("");
  if (mode == "off" || mode == "0") return "";
  std::string path = tuning_file_path(rt.info());
  if (path.empty()) return "";
  std::string why;
  const auto tuning = load_tuning(path, &why);
  if (!tuning) {
    if (std::filesystem::exists(path)) log("CLBlast tuning ignored: " + why + " — run `anycl tune` again");
    return apply_database_tuning(rt, cache, log);
  }
  try {
    apply_checked_tuning(rt, *tuning, cache);
    log("CLBlast tuning applied from " + path);
    return path;
  } catch (const ValidationError& e) {
    // Intact but unusable parameters would compute wrong results silently: refuse, and say how to fix.
    throw DataError(
        fmt::format("{}: {} — run `anycl tune --reset` to remove it (CLBlast's defaults apply), "
                    "or set ANYCL_TUNING=off",
                    path, e.what()));
  } catch (const Error& e) {
    log(std::string("CLBlast tuning ignored: ") + e.what());
  }
  return "";
}

}  // namespace

bool install_stored_tuning_hook() {
  stored_tuning_hook() = &apply_stored_tuning;
  return true;
}

}  // namespace anycl::detail
