// Device discovery through the raw OpenCL API (queried once per call; cheap) and the
// selection rules for device specs.
#include "anycl/device.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "anycl/error.hpp"
#include "runtime/device_select.hpp"
#include "runtime/driver_hints.hpp"
#include "runtime/opencl_setup.hpp"
#include "util/platform.hpp"
#include "util/process.hpp"

namespace anycl {
namespace {

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

std::string platform_string(cl_platform_id p, cl_platform_info what) {
  size_t size = 0;
  detail::check_cl(clGetPlatformInfo(p, what, 0, nullptr, &size), "clGetPlatformInfo");
  std::string s(size, '\0');
  detail::check_cl(clGetPlatformInfo(p, what, size, s.data(), nullptr), "clGetPlatformInfo");
  while (!s.empty() && s.back() == '\0') s.pop_back();
  return s;
}

std::string device_string(cl_device_id d, cl_device_info what) {
  size_t size = 0;
  detail::check_cl(clGetDeviceInfo(d, what, 0, nullptr, &size), "clGetDeviceInfo");
  std::string s(size, '\0');
  detail::check_cl(clGetDeviceInfo(d, what, size, s.data(), nullptr), "clGetDeviceInfo");
  while (!s.empty() && (s.back() == '\0' || s.back() == ' ')) s.pop_back();
  return s;
}

template <typename T>
T device_value(cl_device_id d, cl_device_info what) {
  T value{};
  detail::check_cl(clGetDeviceInfo(d, what, sizeof(T), &value, nullptr), "clGetDeviceInfo");
  return value;
}

DeviceType to_device_type(cl_device_type t) {
  if (t & CL_DEVICE_TYPE_GPU) return DeviceType::gpu;
  if (t & CL_DEVICE_TYPE_ACCELERATOR) return DeviceType::accelerator;
  if (t & CL_DEVICE_TYPE_CPU) return DeviceType::cpu;
  return DeviceType::other;
}

const char* kNoPlatformHint =
    "no OpenCL platform found — install an OpenCL driver (ICD): for CPUs Debian's `pocl-opencl-icd`, "
    "for GPUs the vendor's driver (NVIDIA: nvidia-opencl-icd, AMD: ROCm/mesa-opencl-icd, Intel: "
    "intel-opencl-icd); check that /etc/OpenCL/vendors (or $OCL_ICD_VENDORS) lists its .icd file";

DeviceInfo query(cl_platform_id platform, cl_device_id id, size_t p, size_t d) {
  DeviceInfo info;
  info.platform_index = p;
  info.device_index = d;
  info.platform_name = platform_string(platform, CL_PLATFORM_NAME);
  info.platform_version = platform_string(platform, CL_PLATFORM_VERSION);
  info.name = device_string(id, CL_DEVICE_NAME);
  info.vendor = device_string(id, CL_DEVICE_VENDOR);
  info.vendor_id = device_value<cl_uint>(id, CL_DEVICE_VENDOR_ID);
  info.type = to_device_type(device_value<cl_device_type>(id, CL_DEVICE_TYPE));
  info.driver_version = device_string(id, CL_DRIVER_VERSION);
  info.opencl_c_version = device_string(id, CL_DEVICE_OPENCL_C_VERSION);
  info.compute_units = device_value<cl_uint>(id, CL_DEVICE_MAX_COMPUTE_UNITS);
  info.max_clock_mhz = device_value<cl_uint>(id, CL_DEVICE_MAX_CLOCK_FREQUENCY);
  info.global_mem_bytes = device_value<cl_ulong>(id, CL_DEVICE_GLOBAL_MEM_SIZE);
  info.local_mem_bytes = device_value<cl_ulong>(id, CL_DEVICE_LOCAL_MEM_SIZE);
  info.max_alloc_bytes = device_value<cl_ulong>(id, CL_DEVICE_MAX_MEM_ALLOC_SIZE);
  info.max_work_group_size = device_value<size_t>(id, CL_DEVICE_MAX_WORK_GROUP_SIZE);
  info.preferred_float_vector_width = device_value<cl_uint>(id, CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT);
  info.base_address_alignment = device_value<cl_uint>(id, CL_DEVICE_MEM_BASE_ADDR_ALIGN) / 8;  // in bits
  const std::string extensions = " " + device_string(id, CL_DEVICE_EXTENSIONS) + " ";
  info.fp16 = extensions.find(" cl_khr_fp16 ") != std::string::npos;
  info.fp64 = extensions.find(" cl_khr_fp64 ") != std::string::npos ||
              device_value<cl_device_fp_config>(id, CL_DEVICE_DOUBLE_FP_CONFIG) != 0;
  info.unified_memory = device_value<cl_bool>(id, CL_DEVICE_HOST_UNIFIED_MEMORY) == CL_TRUE;
  info.id = id;
  return info;
}

// GPUs first, then accelerators, then CPUs; within a type more compute units, then more memory.
bool better(const DeviceInfo& a, const DeviceInfo& b) {
  auto rank = [](DeviceType t) {
    switch (t) {
      case DeviceType::gpu:
        return 0;
      case DeviceType::accelerator:
        return 1;
      case DeviceType::cpu:
        return 2;
      default:
        return 3;
    }
  };
  if (rank(a.type) != rank(b.type)) return rank(a.type) < rank(b.type);
  if (a.compute_units != b.compute_units) return a.compute_units > b.compute_units;
  return a.global_mem_bytes > b.global_mem_bytes;
}

bool is_number(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

bool matches_vendor(const DeviceInfo& d, const std::string& spec) {
  const std::string vendor = lower(d.vendor + " " + d.platform_name);
  if (spec == "nvidia") return vendor.find("nvidia") != std::string::npos || d.vendor_id == 0x10de;
  if (spec == "amd")
    return vendor.find("amd") != std::string::npos || vendor.find("advanced micro") != std::string::npos ||
           d.vendor_id == 0x1002;
  const bool pocl = detail::is_pocl_platform(d.vendor + " " + d.platform_name, d.platform_version);
  if (spec == "pocl") return pocl;
  // PoCL reports Intel's vendor id 0x8086 for any x86 CPU (AMD's too): not Intel's driver.
  if (spec == "intel") return !pocl && (vendor.find("intel") != std::string::npos || d.vendor_id == 0x8086);
  return false;
}

// Every device of every platform; `setup_hint` gets what a platform that offers no device says
// about its driver's set-up (driver_hints.hpp), since a broken set-up can hide a driver's devices.
std::vector<DeviceInfo> discover(std::string* setup_hint) {
  const auto setup = detail::lock_opencl_setup();
  cl_uint num_platforms = 0;
  const cl_int status = clGetPlatformIDs(0, nullptr, &num_platforms);
  if (status == CL_PLATFORM_NOT_FOUND_KHR || (status == CL_SUCCESS && num_platforms == 0))
    throw DeviceError(kNoPlatformHint);
  detail::check_cl(status, "clGetPlatformIDs");
  std::vector<cl_platform_id> platforms(num_platforms);
  detail::check_cl(clGetPlatformIDs(num_platforms, platforms.data(), nullptr), "clGetPlatformIDs");

  std::vector<DeviceInfo> devices;
  for (size_t p = 0; p < platforms.size(); ++p) {
    cl_uint n = 0;
    const cl_int st = clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 0, nullptr, &n);
    if (st == CL_DEVICE_NOT_FOUND || n == 0) {
      // A platform with no device is not an error, but its driver's set-up may say why it has none.
      if (setup_hint->empty())
        *setup_hint = detail::driver_setup_hint(platform_string(platforms[p], CL_PLATFORM_NAME),
                                                platform_string(platforms[p], CL_PLATFORM_VERSION));
      continue;
    }
    detail::check_cl(st, "clGetDeviceIDs");
    std::vector<cl_device_id> ids(n);
    detail::check_cl(clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, n, ids.data(), nullptr),
                     "clGetDeviceIDs");
    for (size_t d = 0; d < ids.size(); ++d) {
      devices.push_back(query(platforms[p], ids[d], p, d));
      devices.back().index = devices.size() - 1;
    }
  }
  if (devices.empty())
    throw DeviceError(fmt::format("{} OpenCL platform(s) found but no device — {}", platforms.size(),
                                  !setup_hint->empty() ? *setup_hint
                                                       : "check that the driver supports this hardware, or "
                                                         "install `pocl-opencl-icd` to use the CPU"));
  return devices;
}

}  // namespace

void detail::check_not_forked_after_opencl(const char* call) {
  if (detail::platform::forked_after_watch())
    throw UnsupportedError(fmt::format(
        "{}: this process was forked after it (or its parent) used OpenCL, and OpenCL drivers do not "
        "survive a fork (their threads stay in the parent; calls would hang) — start workers with "
        "multiprocessing's 'spawn' or 'forkserver' method (multiprocessing.set_start_method(\"spawn\")), "
        "or fork before the first anycl call and create the runtime in each child",
        call));
}

std::recursive_mutex& detail::opencl_setup_mutex() {
  static std::recursive_mutex setup;
  return setup;
}

// The fork check comes first: in a forked child the lock may be held for ever (by a thread of the
// parent that was inside it at the fork).
std::unique_lock<std::recursive_mutex> detail::lock_opencl_setup() {
  check_not_forked_after_opencl("anycl");
  std::unique_lock<std::recursive_mutex> lock(opencl_setup_mutex());
  detail::platform::watch_for_fork();
  return lock;
}

const char* to_string(DeviceType type) noexcept {
  switch (type) {
    case DeviceType::gpu:
      return "gpu";
    case DeviceType::cpu:
      return "cpu";
    case DeviceType::accelerator:
      return "accelerator";
    default:
      return "other";
  }
}

std::vector<DeviceInfo> list_devices() {
  std::string setup_hint;
  return discover(&setup_hint);
}

std::string describe_devices(const std::vector<DeviceInfo>& devices) {
  std::string out;
  for (const auto& d : devices)
    out +=
        fmt::format("  {} ({}:{})  {}  [{}, {}, {} CUs, {} MiB]\n", d.index, d.platform_index, d.device_index,
                    d.name, to_string(d.type), d.platform_name, d.compute_units, d.global_mem_bytes >> 20);
  return out;
}

std::string device_spec_from_env() { return detail::platform::get_env("ANYCL_DEVICE").value_or(""); }

namespace {

// `from_env`: the spec is $ANYCL_DEVICE's (the caller named none), and the message says so — a user
// who never typed a spec must learn where it came from and that unsetting it is a way out.
DeviceInfo select_device_from(const std::string& raw_spec, bool from_env) {
  std::string setup_hint;
  const std::vector<DeviceInfo> devices = discover(&setup_hint);
  const std::string spec = lower(raw_spec);
  std::vector<DeviceInfo> matches;
  auto keep_if = [&](auto pred) {
    for (const auto& d : devices)
      if (pred(d)) matches.push_back(d);
  };
  const auto colon = spec.find(':');
  if (spec.empty()) {
    matches = devices;
  } else if (is_number(spec)) {
    keep_if([&](const DeviceInfo& d) { return std::to_string(d.index) == spec; });
  } else if (colon != std::string::npos && is_number(spec.substr(0, colon)) &&
             is_number(spec.substr(colon + 1))) {
    keep_if([&](const DeviceInfo& d) {
      return std::to_string(d.platform_index) == spec.substr(0, colon) &&
             std::to_string(d.device_index) == spec.substr(colon + 1);
    });
  } else if (spec == "gpu" || spec == "cpu" || spec == "accelerator") {
    keep_if([&](const DeviceInfo& d) { return spec == to_string(d.type); });
  } else if (spec == "nvidia" || spec == "amd" || spec == "intel" || spec == "pocl") {
    keep_if([&](const DeviceInfo& d) { return matches_vendor(d, spec); });
  } else {
    keep_if([&](const DeviceInfo& d) { return lower(d.name).find(spec) != std::string::npos; });
  }
  if (matches.empty())
    throw DeviceSpecError(fmt::format(
        "no OpenCL device matches '{}'{}. Devices found:\n{}{} an index (0), platform:device (0:0), "
        "a type (gpu, cpu, accelerator), a vendor (nvidia, amd, intel, pocl) or part of a name{}{}",
        raw_spec, from_env ? ", the device spec taken from $ANYCL_DEVICE" : "", describe_devices(devices),
        from_env ? "Set ANYCL_DEVICE to" : "Use",
        from_env ? ", or unset ANYCL_DEVICE to use the best device" : "",
        setup_hint.empty() ? "" : ". Not listed: " + setup_hint));
  return *std::min_element(matches.begin(), matches.end(), better);
}

}  // namespace

DeviceInfo select_device(const std::string& spec) { return select_device_from(spec, false); }

DeviceInfo detail::select_device_or_env(const std::string& spec) {
  if (!spec.empty()) return select_device_from(spec, false);
  const std::string env = device_spec_from_env();
  return select_device_from(env, !env.empty());
}

}  // namespace anycl
