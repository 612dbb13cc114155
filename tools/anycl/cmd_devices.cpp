// `anycl devices`: every OpenCL device with its properties (table or --json); --verbose also
// starts a Runtime on the selected device and reports kernel compilation and cache figures.
#include <fmt/format.h>

#include "anycl/runtime.hpp"
#include "args.hpp"
#include "commands.hpp"
#include "device_flag.hpp"

namespace anycl::cli {
namespace {

const char* yes_no(bool b) { return b ? "yes" : "no"; }

void print_table(const std::vector<DeviceInfo>& devices, size_t selected) {
  for (const auto& d : devices) {
    fmt::print("{} device {} ({}:{}): {}\n", d.index == selected ? "*" : " ", d.index, d.platform_index,
               d.device_index, d.name);
    fmt::print("    platform        {} ({})\n", d.platform_name, d.platform_version);
    fmt::print("    vendor          {} (id 0x{:x}), type {}\n", d.vendor, d.vendor_id, to_string(d.type));
    fmt::print("    driver          {}, {}\n", d.driver_version, d.opencl_c_version);
    fmt::print("    compute         {} units at {} MHz, max work-group {}, float vector width {}\n",
               d.compute_units, d.max_clock_mhz, d.max_work_group_size, d.preferred_float_vector_width);
    fmt::print("    memory          {} MiB global, {} KiB local, {} MiB max allocation, unified: {}\n",
               d.global_mem_bytes >> 20, d.local_mem_bytes >> 10, d.max_alloc_bytes >> 20,
               yes_no(d.unified_memory));
    fmt::print("    fp16 / fp64     {} / {}\n", yes_no(d.fp16), yes_no(d.fp64));
  }
  fmt::print("* = selected (--device / ANYCL_DEVICE, else the best device)\n");
}

}  // namespace

int run_devices(int argc, char** argv) {
  const Args args(argc, argv, 2, {"--device"}, {"--json", "--verbose", "--help"});
  if (args.has("--help")) {
    fmt::print(
        "usage: anycl devices [--json] [--verbose] [--device SPEC]\n"
        "  Lists every OpenCL device; * marks the one anycl would use.\n"
        "  --json     machine-readable output\n"
        "  --verbose  also start the runtime on the selected device and report kernel compilation\n"
        "             (programs, disk-cache hits and misses, seconds)\n");
    return 0;
  }
  if (!args.positional().empty()) throw UsageError("unexpected argument '" + args.positional().front() + "'");
  const std::vector<DeviceInfo> devices = list_devices();
  const DeviceInfo selected = select_device_or_usage_error(args);
  if (args.has("--json"))
    fmt::print("{}", devices_json(devices, selected.index));
  else
    print_table(devices, selected.index);

  if (args.has("--verbose")) {
    RuntimeOptions options;
    options.device_spec = std::to_string(selected.index);
    options.log = [](const std::string& line) { fmt::print(stderr, "  {}\n", line); };
    fmt::print(stderr, "starting the runtime on device {} ({}):\n", selected.index, selected.name);
    Runtime rt(options);
    const CompileStats& s = rt.stats();
    if (!s.driver_cache.empty())
      fmt::print(
          stderr,
          "runtime ready: {} programs, {} from the disk cache, {} built through the driver's own kernel "
          "cache {} (`anycl cache warm` stores them), {:.3f} s; cache: {}\n",
          s.programs, s.cache_hits, s.cache_misses, s.driver_cache, s.seconds, s.cache_dir);
    else
      fmt::print(
          stderr, "runtime ready: {} programs, {} from the disk cache, {} compiled, {:.3f} s; cache: {}\n",
          s.programs, s.cache_hits, s.cache_misses, s.seconds, s.cache_dir.empty() ? "off" : s.cache_dir);
  }
  return 0;
}

}  // namespace anycl::cli
