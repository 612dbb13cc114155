// CLBlast's calls that pass parameters by name in std::string and std::unordered_map
// (Retrieve/OverrideParameters), behind an interface of plain C types:
// clblast_params.cpp can then be compiled against the standard library CLBlast was built with
// (libstdc++ on Debian) while the rest of anycl uses another one (clang's libc++,
// tools/run-sanitizers.sh). The inline wrappers below are what callers use.
#pragma once

#include <clblast.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "blas/clblast_library.hpp"

namespace anycl::detail {

/// How many times CLBlast's parameters were changed in this process so far (override_parameters below
/// counts each; defined in clblast_params_lock.cpp): a runtime's GEMM layout read at one count is read
/// again at another, so a tuning applied on another Runtime, or a dW scope, never leaves a runtime
/// laying calls out for a set CLBlast no longer runs.
uint64_t clblast_params_generation();
/// Counts a change (after every override, made under ClblastParamsChange).
void note_clblast_params_changed();

}  // namespace anycl::detail

namespace anycl::detail::clblast_params {

/// Receives one parameter (name, value); `context` is the caller's.
using Sink = void (*)(void* context, const char* name, size_t value);

// The plain-type seam (clblast_params.cpp). Each returns CLBlast's status code as an int and
// never lets an exception out.
int retrieve_raw(cl_device_id device, const char* kernel, Sink sink, void* context);
int override_raw(cl_device_id device, const char* kernel, const char* const* names, const size_t* values,
                 size_t count);

inline void into_map(void* context, const char* name, size_t value) {
  (*static_cast<std::map<std::string, size_t>*>(context))[name] = value;
}

/// CLBlast's current single-precision parameters of `kernel` on `device`.
inline clblast::StatusCode retrieve(cl_device_id device, const std::string& kernel,
                                    std::map<std::string, size_t>& params) {
  params.clear();
  require_clblast("clblast::RetrieveParameters");
  return clblast::StatusCode(retrieve_raw(device, kernel.c_str(), &into_map, &params));
}

/// Overrides the single-precision parameters of `kernel` on `device`.
inline clblast::StatusCode override_parameters(cl_device_id device, const std::string& kernel,
                                               const std::map<std::string, size_t>& params) {
  require_clblast("clblast::OverrideParameters");
  std::vector<const char*> names;
  std::vector<size_t> values;
  for (const auto& [name, value] : params) names.push_back(name.c_str()), values.push_back(value);
  const int status = override_raw(device, kernel.c_str(), names.data(), values.data(), names.size());
  note_clblast_params_changed();  // every runtime's layout is read again (clblast_params_lock.hpp)
  return clblast::StatusCode(status);
}

}  // namespace anycl::detail::clblast_params
