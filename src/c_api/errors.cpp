// The C API's status codes and the thread-local last error: each C++ exception class maps to one
// status, and its message (the same text the C++ exception carries) is kept per thread.
#include <fmt/format.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <new>

#include "anycl/error.hpp"
#include "c_api/contract.hpp"
#include "c_api/handles.hpp"
#include "util/printable_text.hpp"

namespace anycl::detail::c_api {
namespace {
thread_local std::string last_error;
}  // namespace

anycl_status fail(anycl_status status, const std::string& message) {
  try {
    last_error = printable_text(message);
  } catch (...) {  // no memory for the message: the status still says what happened
    last_error.clear();
  }
  return status;
}

void clear_error() { last_error.clear(); }

anycl_status from_current_exception() {
  try {
    throw;
  } catch (const StatusError& e) {
    return fail(e.status, e.what());
  } catch (const DeviceError& e) {
    return fail(ANYCL_ERROR_DEVICE, e.what());
  } catch (const BuildError& e) {
    return fail(ANYCL_ERROR_BUILD, e.what());
  } catch (const OpenCLError& e) {
    return fail(ANYCL_ERROR_OPENCL, e.what());
  } catch (const ValidationError& e) {
    return fail(ANYCL_ERROR_INVALID_ARGUMENT, e.what());
  } catch (const DataError& e) {
    return fail(ANYCL_ERROR_DATA, e.what());
  } catch (const NumericalError& e) {
    return fail(ANYCL_ERROR_NUMERICAL, e.what());
  } catch (const UnsupportedError& e) {
    return fail(ANYCL_ERROR_UNSUPPORTED, e.what());
  } catch (const IoError& e) {
    return fail(ANYCL_ERROR_IO, e.what());
  } catch (const std::filesystem::filesystem_error& e) {
    return fail(ANYCL_ERROR_IO, e.what());
  } catch (const std::bad_alloc&) {
    return fail(ANYCL_ERROR_OUT_OF_MEMORY, "out of host memory — use fewer or smaller samples or batches");
  } catch (const std::exception& e) {
    return fail(ANYCL_ERROR_INTERNAL, e.what());
  } catch (...) {
    return fail(ANYCL_ERROR_INTERNAL, "unknown failure inside anycl (a non-standard exception)");
  }
}

void check_struct_size(const char* call, size_t given, size_t known, const char* init) {
  if (given < known)
    throw ValidationError(
        fmt::format("{}: options.struct_size is {}, expected {} — initialise the options with {}", call,
                    given, known, init));
  if (given > known)
    throw StatusError(
        ANYCL_ERROR_VERSION,
        fmt::format("{}: options.struct_size is {}, larger than the {} bytes this library knows — "
                    "the program was built against a newer anycl.h (or the field is garbage): "
                    "initialise the options with {} and use a library at least as new as the header",
                    call, given, known, init));
}

void check_struct_size(const char* call, size_t given, std::initializer_list<size_t> earlier, size_t known,
                       const char* init) {
  for (size_t size : earlier)
    if (given == size) return;
  check_struct_size(call, given, known, init);
}

void check_finite_option(const char* call, const char* what, double value) {
  if (!std::isfinite(value))
    throw ValidationError(fmt::format("{}: {} is {} — pass a finite number", call, what, value));
}

void require(const void* p, const char* call, const char* what) {
  if (!p) throw ValidationError(fmt::format("{}: {} is NULL — pass a valid pointer", call, what));
}

void copy_text(const std::string& text, char* buffer, size_t capacity, size_t* length, const char* call) {
  require(length, call, "length");
  *length = text.size();
  if (!buffer || capacity <= text.size())
    throw StatusError(ANYCL_ERROR_BUFFER_TOO_SMALL,
                      fmt::format("{}: the text needs {} bytes (NUL included), the buffer holds {} — call "
                                  "again with a larger buffer",
                                  call, text.size() + 1, buffer ? capacity : 0));
  text.copy(buffer, text.size());
  buffer[text.size()] = '\0';
}

}  // namespace anycl::detail::c_api

extern "C" {

const char* anycl_last_error(void) { return anycl::detail::c_api::last_error.c_str(); }

const char* anycl_status_name(anycl_status status) {
  // Switch on the integer: a caller may pass any int (999), which is no valid anycl_status value to
  // load as the enum (UBSan: invalid enum load).
  int value = 0;
  static_assert(sizeof value == sizeof status, "anycl_status is an int-sized enum");
  std::memcpy(&value, &status, sizeof value);
  switch (value) {
    case ANYCL_OK:
      return "ANYCL_OK";
    case ANYCL_ERROR_INVALID_ARGUMENT:
      return "ANYCL_ERROR_INVALID_ARGUMENT";
    case ANYCL_ERROR_DEVICE:
      return "ANYCL_ERROR_DEVICE";
    case ANYCL_ERROR_OPENCL:
      return "ANYCL_ERROR_OPENCL";
    case ANYCL_ERROR_BUILD:
      return "ANYCL_ERROR_BUILD";
    case ANYCL_ERROR_DATA:
      return "ANYCL_ERROR_DATA";
    case ANYCL_ERROR_NUMERICAL:
      return "ANYCL_ERROR_NUMERICAL";
    case ANYCL_ERROR_OUT_OF_MEMORY:
      return "ANYCL_ERROR_OUT_OF_MEMORY";
    case ANYCL_ERROR_UNSUPPORTED:
      return "ANYCL_ERROR_UNSUPPORTED";
    case ANYCL_ERROR_VERSION:
      return "ANYCL_ERROR_VERSION";
    case ANYCL_ERROR_BUFFER_TOO_SMALL:
      return "ANYCL_ERROR_BUFFER_TOO_SMALL";
    case ANYCL_ERROR_INTERNAL:
      return "ANYCL_ERROR_INTERNAL";
    case ANYCL_ERROR_IO:
      return "ANYCL_ERROR_IO";
  }
  return "ANYCL_ERROR_UNKNOWN_STATUS";
}

}  // extern "C"
