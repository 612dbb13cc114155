// Error types and OpenCL status names: the message format every failure shares.
#include "anycl/error.hpp"

#include <fmt/format.h>

namespace anycl {

const char* cl_status_name(int status) noexcept {
  switch (status) {
    case 0:
      return "CL_SUCCESS";
    case -1:
      return "CL_DEVICE_NOT_FOUND";
    case -2:
      return "CL_DEVICE_NOT_AVAILABLE";
    case -3:
      return "CL_COMPILER_NOT_AVAILABLE";
    case -4:
      return "CL_MEM_OBJECT_ALLOCATION_FAILURE";
    case -5:
      return "CL_OUT_OF_RESOURCES";
    case -6:
      return "CL_OUT_OF_HOST_MEMORY";
    case -7:
      return "CL_PROFILING_INFO_NOT_AVAILABLE";
    case -8:
      return "CL_MEM_COPY_OVERLAP";
    case -11:
      return "CL_BUILD_PROGRAM_FAILURE";
    case -12:
      return "CL_MAP_FAILURE";
    case -13:
      return "CL_MISALIGNED_SUB_BUFFER_OFFSET";
    case -14:
      return "CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST";
    case -30:
      return "CL_INVALID_VALUE";
    case -31:
      return "CL_INVALID_DEVICE_TYPE";
    case -32:
      return "CL_INVALID_PLATFORM";
    case -33:
      return "CL_INVALID_DEVICE";
    case -34:
      return "CL_INVALID_CONTEXT";
    case -35:
      return "CL_INVALID_QUEUE_PROPERTIES";
    case -36:
      return "CL_INVALID_COMMAND_QUEUE";
    case -38:
      return "CL_INVALID_MEM_OBJECT";
    case -42:
      return "CL_INVALID_BINARY";
    case -43:
      return "CL_INVALID_BUILD_OPTIONS";
    case -44:
      return "CL_INVALID_PROGRAM";
    case -45:
      return "CL_INVALID_PROGRAM_EXECUTABLE";
    case -46:
      return "CL_INVALID_KERNEL_NAME";
    case -47:
      return "CL_INVALID_KERNEL_DEFINITION";
    case -48:
      return "CL_INVALID_KERNEL";
    case -49:
      return "CL_INVALID_ARG_INDEX";
    case -50:
      return "CL_INVALID_ARG_VALUE";
    case -51:
      return "CL_INVALID_ARG_SIZE";
    case -52:
      return "CL_INVALID_KERNEL_ARGS";
    case -53:
      return "CL_INVALID_WORK_DIMENSION";
    case -54:
      return "CL_INVALID_WORK_GROUP_SIZE";
    case -55:
      return "CL_INVALID_WORK_ITEM_SIZE";
    case -56:
      return "CL_INVALID_GLOBAL_OFFSET";
    case -57:
      return "CL_INVALID_EVENT_WAIT_LIST";
    case -58:
      return "CL_INVALID_EVENT";
    case -59:
      return "CL_INVALID_OPERATION";
    case -61:
      return "CL_INVALID_BUFFER_SIZE";
    case -63:
      return "CL_INVALID_GLOBAL_WORK_SIZE";
    case -1001:
      return "CL_PLATFORM_NOT_FOUND_KHR";
    default:
      return "unknown status";
  }
}

namespace {
// What a person can do about the statuses that mean "the device is out of something" or gone.
const char* status_hint(int status) {
  switch (status) {
    case -4:   // CL_MEM_OBJECT_ALLOCATION_FAILURE
    case -5:   // CL_OUT_OF_RESOURCES
    case -6:   // CL_OUT_OF_HOST_MEMORY
    case -61:  // CL_INVALID_BUFFER_SIZE
      return " — the device ran out of memory or resources: use a smaller batch (--batch) or smaller layers, "
             "or stop other programs using the device";
    case -2:  // CL_DEVICE_NOT_AVAILABLE
      return " — the device is not available (lost, reset or in use): check the driver and try again";
    default:
      return "";
  }
}
}  // namespace

OpenCLError::OpenCLError(int status, std::string call, const std::string& context)
    : Error(fmt::format("{} failed: {} ({}){}{}{}", call, cl_status_name(status), status,
                        context.empty() ? "" : " in ", context, status_hint(status))),
      status_(status),
      call_(std::move(call)) {}

BuildError::BuildError(const std::string& program, const std::string& options, const std::string& device,
                       std::string log)
    : Error(fmt::format("OpenCL program '{}' failed to build on '{}' with options '{}':\n{}", program, device,
                        options, log)),
      log_(std::move(log)) {}

namespace detail {
void check_cl(int status, const char* call, const std::string& context) {
  if (status != 0) throw OpenCLError(status, call, context);
}
}  // namespace detail

}  // namespace anycl
