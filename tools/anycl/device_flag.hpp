// The --device flag shared by every subcommand: the spec from the flag or $ANYCL_DEVICE, with
// a spec that matches nothing reported as a usage error (exit 2) naming where it came from.
#pragma once

#include <string>

#include "anycl/device.hpp"
#include "anycl/error.hpp"
#include "args.hpp"

namespace anycl::cli {

/// The device spec: --device, else $ANYCL_DEVICE, else "" (best device).
std::string device_spec(const Args& args);

/// A spec from $ANYCL_DEVICE that matched nothing, as a message naming the variable and the ways out.
std::string env_spec_message(const DeviceSpecError& e);

/// The selected device; a non-matching spec becomes a UsageError naming --device or ANYCL_DEVICE.
DeviceInfo select_device_or_usage_error(const Args& args);

}  // namespace anycl::cli
