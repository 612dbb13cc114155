// First-use tuning: `anycl train` on a device with neither a tuning of its own nor a specific entry
// of the tuning database first runs `anycl tune --quick` at the model's GEMM shapes (a child
// process, about two minutes on a 2-core CPU), stores the result per device and driver, and applies
// it. Opt out with --no-autotune or ANYCL_AUTOTUNE=off. GPUs are left to CLBlast's own database
// unless ANYCL_AUTOTUNE=on: on an NVIDIA H200 the shortlist (sets tuned for CPUs, CLBlast's own
// first) found nothing faster than CLBlast's sets, and training ran no faster (docs/dev/performance-log.md).
#pragma once

#include <string>
#include <vector>

#include "anycl/blas/tuning.hpp"
#include "anycl/runtime.hpp"

namespace anycl::cli {

/// Why first-use tuning does not run for `device`, or "" when it should (no usable tuning file, the
/// database has no entry or only a generic one, ANYCL_AUTOTUNE / ANYCL_TUNING not off, the cache on,
/// and not a GPU unless ANYCL_AUTOTUNE=on).
std::string first_use_tuning_skipped(const DeviceInfo& device);

/// first_use_tuning_skipped's reason for a GPU, which `anycl train` prints as an offer.
inline constexpr const char* kGpuUsesClblastDatabase =
    "a GPU: CLBlast's own GPU database applies (`anycl tune --quick`, or ANYCL_AUTOTUNE=on, tunes it at "
    "this model's shapes)";

/// Runs the quick tuning for each distinct device of `runtimes` that needs it and applies what it
/// stored to every runtime on that device; says what it chose (stdout) unless `quiet`. A failed
/// tuning is reported on stderr and training goes on with the parameters it had.
void run_first_use_tuning(const std::vector<Runtime*>& runtimes, const std::vector<GemmShape>& shapes,
                          bool quiet);

}  // namespace anycl::cli
