// The exceptions anycl throws. The library never exits or prints on its own: it throws one of
// these with enough context (call, kernel, shapes, file) for a person to act on the message.
#pragma once

#include <stdexcept>
#include <string>

namespace anycl {

/// Base of every exception anycl throws.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// An OpenCL call (or a CLBlast routine) returned a failure status.
class OpenCLError : public Error {
 public:
  /// `call` names the failing call; `context` says where (kernel, argument, shapes).
  OpenCLError(int status, std::string call, const std::string& context = {});
  /// The raw OpenCL (or CLBlast) status code.
  int status() const noexcept { return status_; }
  /// The call that failed, e.g. "clEnqueueNDRangeKernel".
  const std::string& call() const noexcept { return call_; }

 private:
  int status_;
  std::string call_;
};

/// An OpenCL program failed to compile; carries the compiler's log.
class BuildError : public Error {
 public:
  /// The message names the program, its build options and the device, then quotes the log.
  BuildError(const std::string& program, const std::string& options, const std::string& device,
             std::string log);
  /// The full build log the OpenCL compiler produced.
  const std::string& log() const noexcept { return log_; }

 private:
  std::string log_;
};

/// An argument or configuration is invalid (shapes, flags, a device spec that matches nothing).
class ValidationError : public Error {
 public:
  using Error::Error;
};

/// No OpenCL device (or no platform at all) is available, or a spec matched none.
class DeviceError : public Error {
 public:
  using Error::Error;
};

/// A device spec (--device / ANYCL_DEVICE) matched no device; the message lists those that exist.
class DeviceSpecError : public DeviceError {
 public:
  using DeviceError::DeviceError;
};

/// A data file is missing, malformed or inconsistent.
class DataError : public Error {
 public:
  using Error::Error;
};

/// This build or installation lacks a component the call needs (CLBlast's DLL where it is
/// delay-loaded, for any GEMM); the message names it and how to add it.
class UnsupportedError : public Error {
 public:
  using Error::Error;
};

/// A file or folder could not be written, created or replaced (a full disk, no permission, a
/// folder or device where a file was named); the message names the path and what to do.
class IoError : public Error {
 public:
  using Error::Error;
};

/// Training diverged: the loss (or the weights) became NaN or infinite.
class NumericalError : public Error {
 public:
  using Error::Error;
};

/// The symbolic name of an OpenCL status code, e.g. "CL_INVALID_WORK_GROUP_SIZE".
const char* cl_status_name(int status) noexcept;

namespace detail {
/// Throws OpenCLError unless `status` is CL_SUCCESS.
void check_cl(int status, const char* call, const std::string& context = {});
}  // namespace detail

}  // namespace anycl
