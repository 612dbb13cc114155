// Devices and runtimes through the C API: the device list as `anycl devices --json` text, and a
// runtime (one device's context, queue and compiled kernels) from a device spec.
#include <atomic>

#include "anycl/device.hpp"
#include "anycl/error.hpp"
#include "c_api/handles.hpp"
#include "runtime/device_select.hpp"
#include "runtime/opencl_setup.hpp"
#include "util/process.hpp"

using namespace anycl::detail::c_api;

namespace anycl::detail::c_api {

std::scoped_lock<std::recursive_mutex, std::recursive_mutex> lock_for_work(anycl_model& model,
                                                                           anycl_runtime& runtime,
                                                                           const char* call) {
  check_not_forked_after_opencl(call);
  return std::scoped_lock<std::recursive_mutex, std::recursive_mutex>(model.use, runtime.work);
}

}  // namespace anycl::detail::c_api

extern "C" {

anycl_status anycl_devices_json(char* buffer, size_t capacity, size_t* length) {
  return guarded([&] {
    require(length, "anycl_devices_json", "length");
    const std::vector<anycl::DeviceInfo> devices = anycl::list_devices();
    const anycl::DeviceInfo selected = anycl::detail::select_device_or_env("");
    copy_text(anycl::devices_json(devices, selected.index), buffer, capacity, length, "anycl_devices_json");
  });
}

anycl_status anycl_runtime_create(const char* device_spec, anycl_runtime** out) {
  return guarded([&] {
    require(out, "anycl_runtime_create", "out");
    *out = nullptr;
    anycl::RuntimeOptions options;
    options.device_spec = device_spec ? device_spec : "";
    auto handle = std::make_unique<anycl_runtime>();
    handle->rt = std::make_unique<anycl::Runtime>(options);
    static std::atomic<uint64_t> next_serial{1};
    handle->serial = next_serial++;
    *out = handle.release();
  });
}

// In a child forked from the process that made the runtime, its driver is gone and releasing would
// hang: the handle is left behind (the child should not use it; see docs/guarantees.md).
void anycl_runtime_destroy(anycl_runtime* runtime) {
  if (runtime && anycl::detail::platform::forked_after_watch()) return;
  delete runtime;
}

anycl_status anycl_runtime_device_name(const anycl_runtime* runtime, char* buffer, size_t capacity,
                                       size_t* length) {
  return guarded([&] {
    require(runtime, "anycl_runtime_device_name", "runtime");
    copy_text(runtime->rt->info().name, buffer, capacity, length, "anycl_runtime_device_name");
  });
}

}  // extern "C"
