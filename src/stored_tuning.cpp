// Applying the parameters `anycl tune` stored for a device when a Runtime starts: the GEMM layer's
// half of the seam in stored_tuning.hpp (the runtime itself links no CLBlast).
#include "stored_tuning.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "anycl/error.hpp"
#include "anycl/runtime.hpp"
#include "anycl/tuning.hpp"
#include "tuning_check.hpp"
#include "util/platform.hpp"

namespace anycl::detail {
namespace {

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
    return "";
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
