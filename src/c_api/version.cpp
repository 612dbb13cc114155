// The version check an application calls first: a library of API version N serves callers built
// against any header version 1..N (functions and option fields are only ever appended).
#include <fmt/format.h>

#include "c_api/handles.hpp"

extern "C" {

int anycl_api_version(void) { return ANYCL_API_VERSION; }

const char* anycl_version_string(void) { return ANYCL_VERSION; }

anycl_status anycl_check_version(int header_api_version) {
  using namespace anycl::detail::c_api;
  if (header_api_version >= 1 && header_api_version <= ANYCL_API_VERSION) {
    clear_error();
    return ANYCL_OK;
  }
  return fail(ANYCL_ERROR_VERSION,
              fmt::format("anycl_check_version: the caller was built against C API version {}, this library "
                          "(anycl {}) serves versions 1 to {} — install a newer anycl or rebuild the caller",
                          header_api_version, ANYCL_VERSION, ANYCL_API_VERSION));
}

}  // extern "C"
