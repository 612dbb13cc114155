// `anycl cache info|clear|warm`: the compiled-kernel cache and CLBlast tuning files.
#include <fmt/format.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "anycl/cache.hpp"
#include "anycl/error.hpp"
#include "args.hpp"
#include "commands.hpp"
#include "device_flag.hpp"

namespace anycl::cli {
namespace {

constexpr const char* kUsage =
    "usage: anycl cache info [--verbose] | clear [--all] | warm [--device SPEC]\n"
    "  info      the cache folder, its compiled kernels and tuning files, and their sizes\n"
    "            (--verbose: one line per file)\n"
    "  clear     remove the compiled kernels (they are rebuilt on the next start);\n"
    "            --all: the CLBlast tuning files from `anycl tune` too\n"
    "  warm      compile every kernel for a device now, so the next start loads them\n"
    "  The folder is $ANYCL_CACHE_DIR, $XDG_CACHE_HOME/anycl or ~/.cache/anycl; ANYCL_CACHE=off\n"
    "  disables it.\n";

std::string human(uint64_t bytes) {
  if (bytes < 1024) return fmt::format("{} B", bytes);
  if (bytes < 1024 * 1024) return fmt::format("{:.1f} KiB", double(bytes) / 1024);
  return fmt::format("{:.1f} MiB", double(bytes) / (1024 * 1024));
}

std::string require_enabled() {
  const std::string dir = cache_dir();
  const char* mode = std::getenv("ANYCL_CACHE");
  if (dir.empty() && mode &&
      (std::strcmp(mode, "off") == 0 || std::strcmp(mode, "0") == 0 || std::strcmp(mode, "false") == 0))
    throw UsageError(
        "the kernel cache is off (ANYCL_CACHE=off) — unset ANYCL_CACHE, or set ANYCL_CACHE_DIR to a folder");
  if (dir.empty())
    throw UsageError(
        "there is no cache folder: ANYCL_CACHE_DIR, XDG_CACHE_HOME and HOME are all unset — set "
        "ANYCL_CACHE_DIR "
        "to a folder");
  std::error_code ec;
  const auto type = std::filesystem::status(dir, ec).type();
  if (type != std::filesystem::file_type::not_found && type != std::filesystem::file_type::directory)
    throw Error(
        fmt::format("the cache folder '{}' exists but is not a folder — remove it, or set "
                    "ANYCL_CACHE_DIR to a folder",
                    dir));
  return dir;
}

}  // namespace

int run_cache(int argc, char** argv) {
  const Args args(argc, argv, 2, {"--device"}, {"--help", "--verbose", "--all"});
  if (args.has("--help")) return fmt::print("{}", kUsage), 0;
  if (args.positional().size() != 1) throw UsageError("name one action: info, clear or warm");
  const std::string action = args.positional().front();
  if (action != "warm" && args.has("--device")) throw UsageError("--device goes with `anycl cache warm`");
  if (action != "clear" && args.has("--all")) throw UsageError("--all goes with `anycl cache clear`");
  if (action != "info" && args.has("--verbose")) throw UsageError("--verbose goes with `anycl cache info`");

  if (action == "info") {
    const std::string dir = require_enabled();
    const CacheInfo info = cache_info();
    fmt::print("cache folder: {}{}\n", dir,
               !info.exists    ? " (not created yet)"
               : info.writable ? ""
                               : " (NOT writable)");
    fmt::print("compiled kernels: {} files, {}\ntuning files: {} files, {}\n", info.kernels,
               human(info.kernel_bytes), info.tunings, human(info.tuning_bytes));
    if (info.other_bytes) fmt::print("other files: {}\n", human(info.other_bytes));
    if (args.has("--verbose"))
      for (const CacheEntry& e : info.entries)
        fmt::print("  {:<7} {:>10}  {}\n",
                   e.kind == CacheEntry::Kind::kernel   ? "kernel"
                   : e.kind == CacheEntry::Kind::tuning ? "tuning"
                                                        : "other",
                   human(e.bytes), e.path);
    return 0;
  }
  if (action == "clear") {
    const std::string dir = require_enabled();
    const size_t removed = clear_cache(args.has("--all"));
    fmt::print("removed {} file{} from {}{}\n", removed, removed == 1 ? "" : "s", dir,
               args.has("--all") ? "" : " (tuning files kept; --all removes them too)");
    return 0;
  }
  if (action == "warm") {
    require_enabled();
    const DeviceInfo device = select_device_or_usage_error(args);
    const CompileStats s = warm_cache(std::to_string(device.index));
    if (const CacheInfo after = cache_info(); !after.exists || !after.writable || after.kernels == 0)
      throw Error(
          fmt::format("compiled {} programs for {}, but nothing could be stored in '{}' — check that "
                      "the folder is writable",
                      s.programs, device.name, after.dir));
    fmt::print("{}: {} programs — {} compiled and cached, {} already cached ({:.1f} s) in {}\n", device.name,
               s.programs, s.cache_misses, s.cache_hits, s.seconds, s.cache_dir);
    return 0;
  }
  throw UsageError(fmt::format("unknown action '{}': use info, clear or warm", action));
}

}  // namespace anycl::cli
