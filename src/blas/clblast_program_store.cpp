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

// The entries (their files) this process has kept or found kept: not written or read again.
std::mutex kept_mutex;
std::set<std::string> kept;

bool is_kept(const std::string& entry) {
  const std::lock_guard<std::mutex> lock(kept_mutex);
  return kept.count(entry) > 0;
}

void forget_kept() {
  const std::lock_guard<std::mutex> lock(kept_mutex);
  kept.clear();
}

void mark_kept(const std::string& entry, bool is) {
  const std::lock_guard<std::mutex> lock(kept_mutex);
  if (is)
    kept.insert(entry);
  else
    kept.erase(entry);
}

// One routine's program on one device: CLBlast's key parts and anycl's cache key.
struct Program {
  cl_platform_id platform;
  std::string device, name, key;
};

// Whether CLBlast holds `p`'s binary (copied into `binary` unless null).
bool clblast_holds(const Program& p, std::vector<unsigned char>* binary) {
  const auto into = [](void* to, const char* bytes, size_t size) {
    if (to) static_cast<std::vector<unsigned char>*>(to)->assign(bytes, bytes + size);
  };
  return clblast_binaries::get(p.platform, p.name.c_str(), p.device.c_str(), into, binary);
}

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

namespace {

// Calls `each(cache, program)` for the program of every routine anycl calls, at CLBlast's current
// parameters on `rt`'s device, and counts the calls that returned true. Nothing (0) with the kernel
// cache off or CLBlast's cache out of reach; a failure is a speed-up lost, never an error.
template <typename Each>
size_t for_each_program(Runtime& rt, Each each) noexcept {
  try {
    if (!clblast_missing().empty() || !clblast_binaries::reachable()) return 0;
    const std::string dir = DiskCache::default_dir();
    if (dir.empty()) return 0;
    const DiskCache cache(dir);
    Program p{platform_of(rt.info().id), clblast_device_name(rt.info().id), "", ""};
    size_t count = 0;
    for (const auto& r : routines()) {
      p.name = clblast_program_name(rt, r.routine);
      if (p.name.empty()) continue;
      p.key = cache_key(rt, p.name);
      count += each(cache, p) ? 1 : 0;
    }
    return count;
  } catch (...) {
    return 0;
  }
}

}  // namespace

size_t restore_clblast_programs(Runtime& rt) noexcept {
  return for_each_program(rt, [&rt](const DiskCache& cache, const Program& p) {
    if (clblast_holds(p, nullptr)) return false;
    const auto binary = cache.get(p.key);
    if (!binary) return false;
    if (!builds(rt, *binary)) {  // refused: CLBlast compiles it, and keep_clblast_programs replaces it
      mark_kept(cache.path(p.key), false);
      return false;
    }
    mark_kept(cache.path(p.key), true);
    return clblast_binaries::put(p.platform, p.name.c_str(), p.device.c_str(),
                                 reinterpret_cast<const char*>(binary->data()), binary->size());
  });
}

void forget_clblast_binaries() noexcept {
  if (!clblast_missing().empty()) return;
  clblast::ClearCache();  // its ProgramCache and BinaryCache; parameter overrides stay
  forget_kept();
}

size_t keep_clblast_programs(Runtime& rt) noexcept {
  return for_each_program(rt, [](const DiskCache& cache, const Program& p) {
    if (is_kept(cache.path(p.key))) return false;
    std::vector<unsigned char> binary;
    if (!clblast_holds(p, &binary) || binary.empty()) return false;  // not compiled in this process (yet)
    mark_kept(cache.path(p.key), true);
    // Absent, or a binary the device refused at restore (a driver that changed under its version):
    // replaced by the one CLBlast compiled.
    const auto old = cache.get(p.key);
    return (!old || *old != binary) && cache.put(p.key, binary);
  });
}

}  // namespace anycl::detail
