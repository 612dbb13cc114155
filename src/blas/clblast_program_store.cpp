// Keeping CLBlast's compiled programs between processes (see the header).
#include "blas/clblast_program_store.hpp"

#include <clblast.h>
#include <fmt/format.h>

#include <filesystem>
#include <map>
#include <mutex>
#include <set>
#include <vector>

#include "anycl/runtime.hpp"
#include "blas/clblast_binary_cache.hpp"
#include "blas/clblast_library.hpp"
#include "blas/clblast_params.hpp"
#include "hash.hpp"
#include "runtime/disk_cache.hpp"
#include "util/platform.hpp"
#include "util/process.hpp"

namespace anycl::detail {
namespace {

// The routines anycl calls, with the kernel families whose parameters CLBlast 1.5.3 names each
// program by (the Routine constructors in its src/routines).
struct RoutineKernels {
  const char* routine;
  std::vector<const char*> kernels;
};
const std::vector<RoutineKernels>& routines() {
  static const std::vector<RoutineKernels> list = [] {
    const std::vector<const char*> gemm = {"Copy",  "Pad",         "Transpose",  "Padtranspose",
                                           "Xgemm", "XgemmDirect", "GemmRoutine"};
    return std::vector<RoutineKernels>{{"GEMM", gemm},
                                       {"GEMMSTRIDEDBATCHED", gemm},
                                       {"CONVGEMM", {"Xconvgemm"}},
                                       {"OMATCOPY", {"Copy", "Pad", "Transpose", "Padtranspose"}}};
  }();
  return list;
}

std::string device_string(cl_device_id device, cl_device_info what) {
  size_t size = 0;
  if (clGetDeviceInfo(device, what, 0, nullptr, &size) != CL_SUCCESS || size == 0) return "";
  std::string text(size, '\0');
  if (clGetDeviceInfo(device, what, size, text.data(), nullptr) != CL_SUCCESS) return "";
  return text.c_str();  // up to the terminating zero
}

// What else a binary depends on: the options CLBlast builds with and the CLBlast it came from.
uint64_t build_hash(uint64_t h) {
  h = fnv1a(platform::get_env("CLBLAST_BUILD_OPTIONS").value_or(""), h);
  const std::string library =
      platform::library_containing(reinterpret_cast<const void*>(&clblast::ClearCache));
  std::error_code ec;
  const auto size = std::filesystem::file_size(library, ec);
  const auto time = std::filesystem::last_write_time(library, ec).time_since_epoch().count();
  return fnv1a(fmt::format("{} {} {}", library, ec ? 0 : size, ec ? 0 : time), h);
}

std::string cache_key(const Runtime& rt, const std::string& program) {
  return fmt::format("clblast-{:016x}", build_hash(fnv1a(program, device_hash(rt.info()))));
}

cl_platform_id platform_of(cl_device_id device) {
  cl_platform_id platform = nullptr;
  clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof platform, &platform, nullptr);
  return platform;
}

// True when the device builds `binary` (CLBlast would otherwise fail every call of the routine).
bool builds(Runtime& rt, const std::vector<unsigned char>& binary) {
  cl_device_id device = rt.info().id;
  const unsigned char* bytes = binary.data();
  const size_t size = binary.size();
  cl_int binary_status = CL_SUCCESS, status = CL_SUCCESS;
  cl_program program =
      clCreateProgramWithBinary(rt.context(), 1, &device, &size, &bytes, &binary_status, &status);
  if (!program) return false;
  const std::string options = platform::get_env("CLBLAST_BUILD_OPTIONS").value_or("");
  const bool ok = status == CL_SUCCESS && binary_status == CL_SUCCESS &&
                  clBuildProgram(program, 1, &device, options.c_str(), nullptr, nullptr) == CL_SUCCESS;
  clReleaseProgram(program);
  return ok;
}

// The entries (cache folder and key) this process has kept or found kept: not written or read again.
std::mutex kept_mutex;
std::set<std::string> kept;

}  // namespace

std::string clblast_device_name(cl_device_id device) {
  // CLBlast 1.5.3's GetDeviceName: AMD's board name where the driver has it, less "pthread-".
  std::string name;
  if (device_string(device, CL_DEVICE_EXTENSIONS).find("cl_amd_device_attribute_query") != std::string::npos)
    name = device_string(device, 0x4038);  // CL_DEVICE_BOARD_NAME_AMD
  else
    name = device_string(device, CL_DEVICE_NAME);
  if (const auto at = name.find("pthread-"); at != std::string::npos) name.erase(at, 8);
  return name;
}

std::string clblast_program_name(Runtime& rt, const std::string& routine) {
  for (const auto& r : routines()) {
    if (routine != r.routine) continue;
    std::string name = r.routine;
    for (const char* kernel : r.kernels) {
      std::map<std::string, size_t> params;  // ordered by name, as CLBlast's own map
      if (clblast_params::retrieve(rt.info().id, kernel, params) != clblast::StatusCode::kSuccess) return "";
      name += fmt::format("_{}", kernel);
      for (const auto& [key, value] : params) name += fmt::format("_{}", value);
    }
    return name;
  }
  return "";
}

size_t restore_clblast_programs(Runtime& rt) noexcept {
  try {
    if (!clblast_missing().empty() || !clblast_binaries::reachable()) return 0;
    const std::string dir = DiskCache::default_dir();
    if (dir.empty()) return 0;
    const DiskCache cache(dir);
    const cl_platform_id platform = platform_of(rt.info().id);
    const std::string device = clblast_device_name(rt.info().id);
    size_t given = 0;
    for (const auto& r : routines()) {
      const std::string program = clblast_program_name(rt, r.routine);
      if (program.empty()) continue;
      const std::string key = cache_key(rt, program);
      if (clblast_binaries::get(
              platform, program.c_str(), device.c_str(), [](void*, const char*, size_t) {}, nullptr))
        continue;  // CLBlast holds it already
      const auto binary = cache.get(key);
      if (!binary) continue;
      if (!builds(rt, *binary)) {  // refused: CLBlast compiles it, and keep_clblast_programs replaces it
        const std::lock_guard<std::mutex> lock(kept_mutex);
        kept.erase(cache.path(key));
        continue;
      }
      if (clblast_binaries::put(platform, program.c_str(), device.c_str(),
                                reinterpret_cast<const char*>(binary->data()), binary->size()))
        ++given;
      const std::lock_guard<std::mutex> lock(kept_mutex);
      kept.insert(cache.path(key));
    }
    return given;
  } catch (...) {  // a speed-up only: CLBlast compiles as before
    return 0;
  }
}

size_t keep_clblast_programs(Runtime& rt) noexcept {
  try {
    if (!clblast_missing().empty() || !clblast_binaries::reachable()) return 0;
    const std::string dir = DiskCache::default_dir();
    if (dir.empty()) return 0;
    const DiskCache cache(dir);
    const cl_platform_id platform = platform_of(rt.info().id);
    const std::string device = clblast_device_name(rt.info().id);
    size_t written = 0;
    for (const auto& r : routines()) {
      const std::string program = clblast_program_name(rt, r.routine);
      if (program.empty()) continue;
      const std::string key = cache_key(rt, program);
      {
        const std::lock_guard<std::mutex> lock(kept_mutex);
        if (kept.count(cache.path(key))) continue;
      }
      std::vector<unsigned char> binary;
      const auto into = [](void* to, const char* bytes, size_t size) {
        static_cast<std::vector<unsigned char>*>(to)->assign(bytes, bytes + size);
      };
      if (!clblast_binaries::get(platform, program.c_str(), device.c_str(), into, &binary) || binary.empty())
        continue;  // not compiled in this process (yet)
      // Absent, or a binary the device refused at restore (a driver that changed under its version):
      // replaced by the one CLBlast compiled.
      const auto old = cache.get(key);
      if ((!old || *old != binary) && cache.put(key, binary)) ++written;
      const std::lock_guard<std::mutex> lock(kept_mutex);
      kept.insert(cache.path(key));
    }
    return written;
  } catch (...) {
    return 0;
  }
}

}  // namespace anycl::detail
