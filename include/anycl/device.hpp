// OpenCL device discovery and selection: what is installed, and which device a spec
// (`--device` / ANYCL_DEVICE) picks. Vendor-neutral: every platform, every device type.
#pragma once

#include "anycl/opencl.hpp"

#include <cstdint>
#include <string>
#include <vector>

namespace anycl {

enum class DeviceType { gpu, cpu, accelerator, other };

/// "gpu", "cpu", "accelerator" or "other".
const char* to_string(DeviceType type) noexcept;

/// Everything anycl reports about one OpenCL device.
struct DeviceInfo {
  size_t index = 0;           // position in list_devices()
  size_t platform_index = 0;  // platform number and device number within it
  size_t device_index = 0;
  std::string platform_name, platform_version;
  std::string name, vendor;
  uint32_t vendor_id = 0;
  DeviceType type = DeviceType::other;
  std::string driver_version, opencl_c_version;
  uint32_t compute_units = 0, max_clock_mhz = 0;
  uint64_t global_mem_bytes = 0, local_mem_bytes = 0, max_alloc_bytes = 0;
  size_t max_work_group_size = 0;
  uint32_t preferred_float_vector_width = 0;
  uint32_t base_address_alignment = 0;  // bytes a sub-buffer's origin is a multiple of (0: unknown)
  bool fp16 = false, fp64 = false, unified_memory = false;
  cl_device_id id = nullptr;
};

/// Every device of every platform. Throws DeviceError (with an install hint) when no platform exists.
std::vector<DeviceInfo> list_devices();

/// The device a spec selects: "" (best), an index "1", "platform:device" "0:1", a type
/// ("gpu", "cpu", "accelerator"), a vendor ("nvidia", "amd", "intel", "pocl") or a
/// case-insensitive substring of the name. Throws DeviceError listing the devices when none matches.
DeviceInfo select_device(const std::string& spec);

/// The spec to use when the caller gives none: $ANYCL_DEVICE, or "" for the best device.
std::string device_spec_from_env();

/// Every device as the JSON array `anycl devices --json` prints; `selected` is the index marked selected.
std::string devices_json(const std::vector<DeviceInfo>& devices, size_t selected);

/// One line per device, as used in error messages and `anycl devices`.
std::string describe_devices(const std::vector<DeviceInfo>& devices);

}  // namespace anycl
