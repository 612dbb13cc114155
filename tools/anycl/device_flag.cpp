// --device / ANYCL_DEVICE handling for the anycl command.
#include "device_flag.hpp"

#include "anycl/error.hpp"

namespace anycl::cli {

std::string device_spec(const Args& args) {
  return args.has("--device") ? args.get("--device") : device_spec_from_env();
}

DeviceInfo select_device_or_usage_error(const Args& args) {
  try {
    return select_device(device_spec(args));
  } catch (const DeviceSpecError& e) {
    throw UsageError(std::string(args.has("--device") ? "--device: " : "ANYCL_DEVICE: ") + e.what());
  }
}

}  // namespace anycl::cli
