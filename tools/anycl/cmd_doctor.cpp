// `anycl doctor`: checks the OpenCL set-up from the loader to a GEMM, the default data set and
// the cache/tuning folder, printing ✓/✗ per check and, for each ✗, what to do. Exit 0 when all pass.
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "anycl/blas/tune.hpp"
#include "anycl/blas/tuning.hpp"
#include "anycl/cache.hpp"
#include "anycl/data/dataset.hpp"
#include "anycl/error.hpp"
#include "anycl/util/bounded_read.hpp"
#include "args.hpp"
#include "commands.hpp"
#include "device_flag.hpp"
#include "util/platform.hpp"
#include "util/process.hpp"

namespace anycl::cli {
namespace {
namespace fs = std::filesystem;

constexpr const char* kUsage =
    "usage: anycl doctor [--device SPEC] [--data DIR]\n"
    "  Checks the OpenCL ICD loader, each installed driver (/etc/OpenCL/vendors or $OCL_ICD_VENDORS),\n"
    "  platforms and devices, compiles anycl's kernels and runs a small GEMM against the host on the\n"
    "  selected device, and checks the data set folder and the kernel cache / tuning folder.\n"
    "  Prints one line per check; each failed check says what to do. Exit code 0 when all pass.\n";

class Report {
 public:
  void pass(const std::string& what) { fmt::print("  \u2713 {}\n", what); }
  void fail(const std::string& what, const std::string& fix) {
    ++failures_;
    fmt::print("  \u2717 {}\n      \u2192 {}\n", what, fix);
  }
  void info(const std::string& what) { fmt::print("    {}\n", what); }
  int failures() const { return failures_; }

 private:
  int failures_ = 0;
};

std::string env(const char* name) { return detail::platform::get_env(name).value_or(""); }

void check_loader(Report& r) {
  const std::string loader =
      detail::platform::library_containing(reinterpret_cast<const void*>(&clGetPlatformIDs));
  if (!loader.empty())
    r.pass(fmt::format("OpenCL ICD loader: {}", loader));
  else
    r.pass("OpenCL ICD loader: linked");
}

// Each .icd file names a driver library; the loader dlopen()s it, so do the same here.
void check_vendors(Report& r) {
  const std::string override_dir = env("OCL_ICD_VENDORS");
  std::string dir = "/etc/OpenCL/vendors";
  if (!override_dir.empty()) {
    std::error_code ec;
    if (fs::is_directory(override_dir, ec)) {
      dir = override_dir;
      r.info(fmt::format("OCL_ICD_VENDORS={} (the loader reads this folder instead of /etc/OpenCL/vendors)",
                         override_dir));
    } else if (fs::is_regular_file(override_dir, ec)) {
      r.info(fmt::format("OCL_ICD_VENDORS={} (one driver file)", override_dir));
      dir.clear();
    } else {
      r.fail(fmt::format("OCL_ICD_VENDORS={} does not exist", override_dir),
             "unset OCL_ICD_VENDORS, or point it at a folder of .icd files");
      return;
    }
  }
  std::vector<fs::path> icds;
  std::error_code ec;
  if (dir.empty()) {
    icds.push_back(override_dir);
  } else {
    for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
      if (it->path().extension() == ".icd") icds.push_back(it->path());
  }
  std::sort(icds.begin(), icds.end());
  if (icds.empty()) {
    r.fail(fmt::format("no OpenCL driver registered: {} holds no .icd file", dir),
           override_dir.empty()
               ? "install a driver: `apt-get install pocl-opencl-icd` for the CPU, or your GPU "
                 "vendor's OpenCL package"
               : "unset OCL_ICD_VENDORS, or point it at a folder holding .icd files");
    return;
  }
  for (const auto& icd : icds) {
    std::string library;
    try {  // a FIFO or device among the .icd files is reported, not waited on
      std::istringstream in(read_text_file_bounded(icd, kMaxTextFileBytes, "OpenCL driver registration"));
      std::getline(in, library);
    } catch (const DataError& e) {
      r.fail(e.what(), "reinstall the driver package that owns it (dpkg -S " + icd.string() + ")");
      continue;
    }
    while (!library.empty() && (library.back() == '\r' || library.back() == ' ')) library.pop_back();
    if (library.empty()) {
      r.fail(fmt::format("driver {}: empty file", icd.string()),
             "reinstall the driver package that owns it (dpkg -S " + icd.string() + ")");
      continue;
    }
    // Never unloaded: drivers built on LLVM abort when loaded a second time after an unload.
    const detail::platform::LoadedLibrary loaded = detail::platform::load_library(library);
    if (loaded.handle) {
      r.pass(fmt::format("driver {} → {} loads", icd.filename().string(), library));
    } else {
      r.fail(fmt::format("driver {} → {} does not load: {}", icd.filename().string(), library, loaded.error),
             "the driver library is missing or broken: reinstall its package (dpkg -S " + icd.string() +
                 "), or remove the stale .icd file");
    }
  }
}

// Runs GEMMs of small integers (exact in float) on the device and compares them with the host.
void check_gemm(Report& r, Runtime& rt) {
  const std::string wrong = gemm_mismatch(rt, {{"doctor", false, false, 65, 31, 47}});
  if (wrong.empty())
    r.pass("GEMM through CLBlast matches the host exactly (65x31x47 and odd sizes, all transposes)");
  else
    r.fail("GEMM through CLBlast differs from the host: " + wrong,
           "the driver computes wrong results: update it, or pick another device with --device");
}

// A stored `anycl tune` file applies to every start: its parameters must compute exact results.
// Checked in a child process before this process compiles anything with them, since a driver may
// crash compiling them; false when they are refused.
bool check_stored_tuning(Report& r, const DeviceInfo& device) {
  const std::string mode = env("ANYCL_TUNING");
  if (mode == "off" || mode == "0") return true;
  const std::string path = tuning_file_path(device);
  if (path.empty()) return true;
  const auto tuning = load_tuning(path);
  if (!tuning) return true;  // the runtime ignores it too (and says why with --verbose)
  const std::string refused = contained_tuning_mismatch(device, *tuning);
  if (refused.empty()) {
    r.pass("stored CLBlast tuning " + path + " computes exact results at the model's shapes");
    return true;
  }
  r.fail("stored CLBlast tuning " + path + " computes wrong results or crashes the driver: " + refused,
         "run `anycl tune --reset` (CLBlast's defaults apply again), then `anycl tune` to tune again");
  return false;
}

void check_device(Report& r, const DeviceInfo& device) {
  if (!check_stored_tuning(r, device)) {
    detail::platform::set_env("ANYCL_TUNING", "off");  // this process's own checks run on CLBlast's defaults
    r.info("the checks below use CLBlast's default parameters");
  }
  try {
    Runtime rt(RuntimeOptions{std::to_string(device.index), false, {}});
    const CompileStats& s = rt.stats();
    if (!s.driver_cache.empty())
      r.pass(
          fmt::format("kernels: {} programs built for {} ({} through the driver's own kernel cache {}, {} "
                      "from anycl's, {:.1f} s)",
                      s.programs, device.name, s.cache_misses, s.driver_cache, s.cache_hits, s.seconds));
    else
      r.pass(fmt::format("kernels: {} programs built for {} ({} compiled, {} from the cache, {:.1f} s)",
                         s.programs, device.name, s.cache_misses, s.cache_hits, s.seconds));
    check_gemm(r, rt);
  } catch (const BuildError& e) {
    r.fail(fmt::format("kernels do not compile on {}: {}", device.name, e.what()),
           "update the OpenCL driver, or pick another device with --device; report the build log above");
  } catch (const OpenCLError& e) {
    const bool oom = e.status() == CL_OUT_OF_RESOURCES || e.status() == CL_OUT_OF_HOST_MEMORY ||
                     e.status() == CL_MEM_OBJECT_ALLOCATION_FAILURE;
    r.fail(fmt::format("{}: {}", device.name, e.what()),
           oom ? "out of memory: close other programs on the device, and train with a smaller --batch"
               : "the driver fails basic calls: update it, or pick another device with --device");
  } catch (const Error& e) {
    r.fail(fmt::format("{}: {}", device.name, e.what()), "pick another device with --device");
  }
}

void check_data(Report& r, const std::string& dir) {
  std::vector<std::string> missing;
  for (const char* base : {"train-images-idx3-ubyte", "train-labels-idx1-ubyte", "t10k-images-idx3-ubyte",
                           "t10k-labels-idx1-ubyte"}) {
    std::error_code ec;
    const std::string p = dir + "/" + base;
    std::string dotted = base;
    dotted[dotted.find('-', 6)] = '.';  // the "train-images.idx3-ubyte" spelling
    bool found = false;
    for (const std::string& c : {p, p + ".gz", dir + "/" + dotted, dir + "/" + dotted + ".gz"})
      found = found || fs::is_regular_file(c, ec);
    if (!found) missing.push_back(base);
  }
  if (missing.empty()) {
    r.pass(fmt::format("data set: {} has the four MNIST-format files", dir));
  } else {
    std::string list;
    for (const auto& m : missing) list += (list.empty() ? "" : ", ") + m;
    r.fail(
        fmt::format("data set: {} lacks {}", dir, list),
        dir == data::kFashionMnistDir
            ? "`apt-get install dataset-fashion-mnist`, or set ANYCL_DATA / --data to an MNIST-format folder"
            : "point ANYCL_DATA or --data at a folder with the MNIST IDX files (plain or .gz)");
  }
}

void check_cache(Report& r) {
  const CacheInfo info = cache_info();
  if (info.dir.empty()) {
    r.pass(
        "kernel cache: off (ANYCL_CACHE=off): every start compiles from source, and `anycl tune` cannot "
        "save");
    return;
  }
  if (info.writable)
    r.pass(fmt::format("cache and tuning folder {} is writable ({} kernels, {} tuning files)", info.dir,
                       info.kernels, info.tunings));
  else
    r.fail(fmt::format("cache and tuning folder {} is not writable", info.dir),
           "fix its permissions, or set ANYCL_CACHE_DIR to a writable folder (ANYCL_CACHE=off disables it)");
}

}  // namespace

int run_doctor(int argc, char** argv) {
  const Args args(argc, argv, 2, {"--device", "--data"}, {"--help"});
  if (args.has("--help")) return fmt::print("{}", kUsage), 0;
  if (!args.positional().empty()) throw UsageError("unexpected argument '" + args.positional().front() + "'");
  Report r;
  fmt::print("OpenCL\n");
  check_loader(r);
  check_vendors(r);
  std::vector<DeviceInfo> devices;
  try {
    devices = list_devices();
  } catch (const Error& e) {
    r.fail(fmt::format("no OpenCL device detected: {}", e.what()),
           "install a driver (Debian: `apt-get install pocl-opencl-icd` for the CPU, or your GPU vendor's "
           "OpenCL package); check that OCL_ICD_VENDORS, if set, points at its .icd files");
  }
  for (const DeviceInfo& d : devices)
    r.pass(fmt::format("device {}: {} ({}, {}, driver {})", d.index, d.name, d.platform_name,
                       to_string(d.type), d.driver_version));
  if (!devices.empty()) {
    DeviceInfo chosen;
    bool have = true;
    try {
      chosen = select_device(device_spec(args));
    } catch (const DeviceError& e) {
      have = false;
      r.fail(e.what(), "fix --device / ANYCL_DEVICE, or leave both unset to use the best device");
    }
    if (have) {
      fmt::print("Device {} ({})\n", chosen.index, chosen.name);
      check_device(r, chosen);
    }
  }
  fmt::print("Files\n");
  check_data(r, args.has("--data") ? args.get("--data") : data::default_data_dir());
  check_cache(r);
  if (r.failures() == 0)
    fmt::print("All checks passed.\n");
  else
    fmt::print("{} check{} failed: see the \u2192 lines for what to do.\n", r.failures(),
               r.failures() == 1 ? "" : "s");
  return r.failures() == 0 ? 0 : 1;
}

}  // namespace anycl::cli
