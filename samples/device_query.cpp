// Sample: discover OpenCL devices and print their properties, the way TensorFlow logs
// "Found device 0 with properties". Usage: device_query
#include <fmt/format.h>
#include <anycl/device.hpp>
#include <anycl/error.hpp>

int main() try {
  // list_devices() asks every installed OpenCL platform (NVIDIA, AMD, Intel, PoCL, ...) for
  // its devices; it throws with an install hint when there is no platform at all.
  const auto devices = anycl::list_devices();
  for (const auto& d : devices) {
    fmt::print("Found device {} with properties:\n", d.index);
    fmt::print("  name: {}  vendor: {}  type: {}\n", d.name, d.vendor, anycl::to_string(d.type));
    fmt::print("  platform: {} ({})  driver: {}  {}\n", d.platform_name, d.platform_version, d.driver_version,
               d.opencl_c_version);
    fmt::print("  computeUnits: {}  clockRate(MHz): {}  maxWorkGroup: {}\n", d.compute_units, d.max_clock_mhz,
               d.max_work_group_size);
    fmt::print("  globalMemory: {:.2f} GiB  localMemory: {} KiB  maxAlloc: {:.2f} GiB  unified: {}\n",
               double(d.global_mem_bytes) / (1 << 30), d.local_mem_bytes >> 10,
               double(d.max_alloc_bytes) / (1 << 30), d.unified_memory);
    fmt::print("  fp16: {}  fp64: {}\n", d.fp16, d.fp64);
  }
  // The device anycl picks when no --device / ANYCL_DEVICE is given: GPUs first, then the
  // one with more compute units and memory.
  const auto best = anycl::select_device(anycl::device_spec_from_env());
  fmt::print("Selected device {}: {}\n", best.index, best.name);
  return 0;
} catch (const anycl::Error& e) {
  fmt::print(stderr, "device_query: {}\n", e.what());
  return 1;
}
