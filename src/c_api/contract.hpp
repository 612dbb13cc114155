// The C API's checks of what a caller hands in, shared by its calls: option structs' sizes (a struct
// from a newer header than the library is refused, naming both sizes) and float options' finiteness.
#pragma once

#include <cstddef>
#include <initializer_list>

namespace anycl::detail::c_api {

/// ValidationError when `given` is below `known` (an uninitialised struct: use `init`), and
/// StatusError(ANYCL_ERROR_VERSION) when above it (built against a newer anycl.h than this library).
void check_struct_size(const char* call, size_t given, size_t known, const char* init);
/// The same, also accepting the struct's sizes in earlier API versions (`earlier`): a caller built
/// against an older anycl.h keeps working, the fields it lacks at their defaults.
void check_struct_size(const char* call, size_t given, std::initializer_list<size_t> earlier, size_t known,
                       const char* init);
/// ValidationError naming `call` and `what` when `value` is NaN or infinite.
void check_finite_option(const char* call, const char* what, double value);

}  // namespace anycl::detail::c_api
