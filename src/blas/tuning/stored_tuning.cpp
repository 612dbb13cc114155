// Applying the parameters `anycl tune` stored for a device when a Runtime starts: the GEMM layer's
// half of the seam in stored_tuning.hpp (the runtime itself links no CLBlast).
#include "blas/tuning/stored_tuning.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <optional>

#include "anycl/blas/tuning.hpp"
#include "anycl/error.hpp"
#include "anycl/runtime.hpp"
#include "blas/clblast_library.hpp"
#include "blas/clblast_params.hpp"
#include "blas/clblast_program_store.hpp"
#include "blas/gemm_plan.hpp"
#include "blas/tuning/tuning_check.hpp"
#include "runtime/disk_cache.hpp"
#include "util/platform.hpp"

namespace anycl::detail {
namespace {

constexpr const char* kFromDatabase = "anycl's tuning database, ";

// No `anycl tune` file: the database's entry for this device class, after the exact GEMM check
// (once per device, driver and entry: the verdict is cached). A refused entry costs nothing but a
// log line; CLBlast's defaults stay. ANYCL_TUNING_DATABASE=off skips it (the tests do); a folder it
// names that cannot be read, or an entry there that does not parse, stops the start with the
// reason (a user's setting is not ignored silently).
std::string apply_database_tuning(Runtime& rt, const DiskCache* cache,
                                  const std::function<void(const std::string&)>& log) {
  std::string entry;
  const std::optional<GemmTuning> tuning = database_tuning(rt.info(), &entry);
  if (!tuning) return "";
  try {
    apply_checked_tuning(rt, *tuning, cache);
    log("CLBlast tuning applied from " + std::string(kFromDatabase) + entry);
    return kFromDatabase + entry;
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
  // No CLBlast (a delay-loaded clblast.dll that is missing): the runtime still starts for everything
  // but GEMM, whose first call says what is missing.
  if (const std::string& why = clblast_missing(); !why.empty()) {
    log("CLBlast tuning not applied: " + why);
    return "";
  }
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

// The GEMM layer's start-up: CLBlast's parameters, then the programs kept for them (a warm start
// loads CLBlast's programs instead of compiling them; clblast_program_store.hpp).
std::string start_gemm_layer(Runtime& rt, const DiskCache* cache,
                             const std::function<void(const std::string&)>& log) {
  gemm_state(rt);  // the GEMM planner's state, made at start rather than by the first GEMM of some thread
  std::string applied = apply_stored_tuning(rt, cache, log);
  restore_clblast_programs(rt);
  return applied;
}

}  // namespace

bool install_stored_tuning_hook() {
  stored_tuning_hook() = &start_gemm_layer;
  return true;
}

}  // namespace anycl::detail

namespace anycl {

void apply_model_tuning(Runtime& rt, const std::vector<GemmShape>& shapes) {
  if (rt.stats().tuning_file.rfind(detail::kFromDatabase, 0) != 0) return;  // a file of its own, or nothing
  if (detail::gemm_state(rt).tuned_here) return;                            // tuned since it started
  const auto tuning = database_tuning(rt.info(), nullptr, nullptr, &shapes);
  if (!tuning) return;
  bool held = true;  // does CLBlast hold these sets already (the usual case: nothing to do)?
  for (const auto& [kernel, params] : tuning->kernels) {
    if (detail::is_gemm_choice(kernel)) {
      held = held && detail::holds_gemm_choice(rt, kernel, params);
      continue;
    }
    std::map<std::string, size_t> now;
    held = held &&
           detail::clblast_params::retrieve(rt.info().id, kernel, now) == clblast::StatusCode::kSuccess &&
           now == params;
  }
  if (held) return;
  const std::string dir = detail::DiskCache::default_dir();
  const detail::DiskCache cache(dir);
  try {
    detail::apply_checked_tuning(rt, *tuning, dir.empty() ? nullptr : &cache);
  } catch (const ValidationError&) {
    // Refused (wrong results): the entry's own sets stay, as the start-up check left them.
  }
}

}  // namespace anycl
