// Checking untrusted CLBlast parameters where a driver crash costs only the check: the check runs
// in a child process (`anycl tune --check FILE --in-this-process`), and a crash is a refusal.
#pragma once

#include <string>

#include "anycl/blas/tuning.hpp"
#include "anycl/device.hpp"

namespace anycl::cli {

/// tuning_mismatch() for `tuning` on `device`, run in a child process: "" when the parameters
/// compute exact results; else why they are refused (wrong results, or the driver crashed while
/// compiling or running them), naming the device, its driver and the parameters.
std::string contained_tuning_mismatch(const DeviceInfo& device, const GemmTuning& tuning);

/// The child side: checks the parameters stored in `file` on `device` in this process and prints
/// the verdict; exit code 0 when exact, kTuningRefused when wrong.
int check_tuning_here(const DeviceInfo& device, const std::string& file);
inline constexpr int kTuningRefused = 3;

/// "Xgemm GEMMK=1 KREG=8 …; XgemmDirect …" for messages.
std::string describe_parameters(const GemmTuning& tuning);

}  // namespace anycl::cli
