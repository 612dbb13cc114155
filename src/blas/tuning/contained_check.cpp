// Untrusted CLBlast parameters checked in a child process: Intel's OpenCL compiler for CPUs
// (2026.2) dies with SIGSEGV compiling some Xgemm parameter sets; that must cost one check.
#include "blas/tuning/contained_check.hpp"

#include <fmt/format.h>

#include <cstdio>

#include "anycl/blas/tune.hpp"
#include "anycl/error.hpp"
#include "anycl/runtime.hpp"
#include "blas/tuning/tune_worker.hpp"

namespace anycl {

std::string describe_parameters(const GemmTuning& tuning) {
  std::string out;
  for (const auto& [name, params] : tuning.kernels) {
    out += (out.empty() ? "" : "; ") + name;
    for (const auto& [key, value] : params) out += fmt::format(" {}={}", key, value);
  }
  return out;
}

std::string contained_tuning_mismatch(const DeviceInfo& device, const GemmTuning& tuning) {
  const std::string worker = find_tune_worker();
  const detail::ScratchDir scratch;  // the parameters travel in a tuning file
  const std::string file = scratch.file("tuning.txt");
  save_tuning(file, tuning);
  std::string output;
  detail::platform::ProcessSpec child;
  child.args = {worker, "check", std::to_string(device.index), file};
  const detail::platform::ProcessExit exit = detail::platform::run_process(child, &output);
  while (!output.empty() && output.back() == '\n') output.pop_back();
  if (exit.code == 0 && exit.signal == 0) return "";
  const std::string where =
      fmt::format("{} (platform {}, driver {})", device.name, device.platform_name, device.driver_version);
  if (exit.code == detail::kTuningRefused && !exit.signal)
    return fmt::format("refused parameter set on {}: {} [{}]", where, output, describe_parameters(tuning));
  return fmt::format(
      "refused parameter set on {}: the check {} — the OpenCL driver crashed compiling or running CLBlast's "
      "kernels with [{}]{}",
      where, detail::describe_exit(exit), describe_parameters(tuning),
      output.empty() ? "" : "; its output: " + output);
}

}  // namespace anycl

namespace anycl::detail {

int check_tuning_here(const DeviceInfo& device, const std::string& file) {
  std::string why;
  const auto tuning = load_tuning(file, &why);
  if (!tuning) throw DataError("the tuning to check: " + why);
  RuntimeOptions options;
  options.device_spec = std::to_string(device.index);
  Runtime rt(options);
  const std::string wrong = tuning_mismatch(rt, *tuning);
  std::printf("%s\n", wrong.empty() ? "exact" : wrong.c_str());
  return wrong.empty() ? 0 : kTuningRefused;
}

}  // namespace anycl::detail
