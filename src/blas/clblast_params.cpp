// The plain-type seam of clblast_params.hpp: the only file that hands CLBlast a std::string or an
// std::unordered_map, so the only one that must use CLBlast's own standard library.
#include "blas/clblast_params.hpp"

#include <string>
#include <unordered_map>

namespace anycl::detail::clblast_params {
namespace {

constexpr int kUnexpectedError = int(clblast::StatusCode::kUnexpectedError);

void emit(const std::unordered_map<std::string, size_t>& params, Sink sink, void* context) {
  for (const auto& [name, value] : params) sink(context, name.c_str(), value);
}

}  // namespace

int retrieve_raw(cl_device_id device, const char* kernel, Sink sink, void* context) {
  try {
    std::unordered_map<std::string, size_t> params;
    const auto status = clblast::RetrieveParameters(device, kernel, clblast::Precision::kSingle, params);
    emit(params, sink, context);
    return int(status);
  } catch (...) {
    return kUnexpectedError;
  }
}

int override_raw(cl_device_id device, const char* kernel, const char* const* names, const size_t* values,
                 size_t count) {
  try {
    std::unordered_map<std::string, size_t> params;
    for (size_t i = 0; i < count; ++i) params[names[i]] = values[i];
    return int(clblast::OverrideParameters(device, kernel, clblast::Precision::kSingle, params));
  } catch (...) {
    return kUnexpectedError;
  }
}

}  // namespace anycl::detail::clblast_params
