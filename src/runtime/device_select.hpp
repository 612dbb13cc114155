// Device selection as the library's own entry points (Runtime, the C API) do it: the caller's spec,
// else $ANYCL_DEVICE — whose mismatch is reported as coming from the environment.
#pragma once

#include <string>

#include "anycl/device.hpp"

namespace anycl::detail {

/// select_device(spec), or with "" the spec from $ANYCL_DEVICE (else the best device); a
/// DeviceSpecError for $ANYCL_DEVICE's spec names it and says to set or unset it.
DeviceInfo select_device_or_env(const std::string& spec);

}  // namespace anycl::detail
