// The C API's checks of what a caller hands in, shared by its calls: option structs' sizes (a struct
// from a newer header than the library is refused, naming both sizes) and float options' finiteness.
#pragma once

#include <cstddef>

namespace anycl::detail::c_api {

/// ValidationError when `given` is below `known` (an uninitialised struct: use `init`), and
/// StatusError(ANYCL_ERROR_VERSION) when above it (built against a newer anycl.h than this library).
void check_struct_size(const char* call, size_t given, size_t known, const char* init);
/// ValidationError naming `call` and `what` when `value` is NaN or infinite.
void check_finite_option(const char* call, const char* what, double value);

}  // namespace anycl::detail::c_api
