// Checking untrusted CLBlast parameters where a driver crash costs only the check: the check runs
// in a child process of the worker program (`anycl-tune-worker check DEVICE FILE`), and a crash is
// a refusal. contained_tuning_mismatch (anycl/blas/tune.hpp) is the parent's side.
#pragma once

#include <string>

#include "anycl/device.hpp"

namespace anycl::detail {

/// The child side: checks the parameters stored in `file` on `device` in this process and prints
/// the verdict; exit code 0 when exact, kTuningRefused when wrong.
int check_tuning_here(const DeviceInfo& device, const std::string& file);
inline constexpr int kTuningRefused = 3;

}  // namespace anycl::detail
