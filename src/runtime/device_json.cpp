// The device list as the JSON text of `anycl devices --json` (also the C API's anycl_devices_json):
// one object per device, `selected` marking the one a runtime without a spec would use.
#include <fmt/format.h>

#include "anycl/device.hpp"
#include "util/json_string.hpp"

namespace anycl {

using detail::json_string;

std::string devices_json(const std::vector<DeviceInfo>& devices, size_t selected) {
  std::string out;
  out += "[\n";
  for (const auto& d : devices) {
    out += fmt::format(
        "  {{\"index\": {}, \"platform_index\": {}, \"device_index\": {}, \"selected\": {}, "
        "\"platform_name\": {}, "
        "\"platform_version\": {}, \"name\": {}, \"vendor\": {}, \"vendor_id\": {}, \"type\": \"{}\", "
        "\"driver_version\": {}, \"opencl_c_version\": {}, \"compute_units\": {}, \"max_clock_mhz\": {}, "
        "\"global_mem_bytes\": {}, \"local_mem_bytes\": {}, \"max_alloc_bytes\": {}, "
        "\"max_work_group_size\": {}, "
        "\"preferred_float_vector_width\": {}, \"fp16\": {}, \"fp64\": {}, \"unified_memory\": {}}}{}\n",
        d.index, d.platform_index, d.device_index, d.index == selected, json_string(d.platform_name),
        json_string(d.platform_version), json_string(d.name), json_string(d.vendor), d.vendor_id,
        to_string(d.type), json_string(d.driver_version), json_string(d.opencl_c_version), d.compute_units,
        d.max_clock_mhz, d.global_mem_bytes, d.local_mem_bytes, d.max_alloc_bytes, d.max_work_group_size,
        d.preferred_float_vector_width, d.fp16, d.fp64, d.unified_memory, &d == &devices.back() ? "" : ",");
  }
  out += "]\n";
  return out;
}

}  // namespace anycl
