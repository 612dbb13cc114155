// --device / ANYCL_DEVICE handling for the anycl command.
#include "device_flag.hpp"

#include <fmt/format.h>

#include "anycl/error.hpp"

namespace anycl::cli {

std::string device_spec(const Args& args) {
  return args.has("--device") ? args.get("--device") : device_spec_from_env();
}

std::string env_spec_message(const DeviceSpecError& e) {
  return fmt::format(
      "ANYCL_DEVICE={} (from the environment): {} — set ANYCL_DEVICE to one of the devices above, "
      "pass --device, or unset ANYCL_DEVICE to use the best device",
      device_spec_from_env(), e.what());
}

DeviceInfo select_device_or_usage_error(const Args& args) {
  try {
    return select_device(device_spec(args));
  } catch (const DeviceSpecError& e) {
    if (args.has("--device")) throw UsageError(std::string("--device: ") + e.what());
    throw UsageError(env_spec_message(e));
  }
}

}  // namespace anycl::cli
