// Listing, clearing and warming the kernel cache folder that Runtime and the tuning files use.
#include "anycl/cache.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "anycl/error.hpp"
#include "anycl/util/atomic_file.hpp"
#include "anycl/util/bounded_read.hpp"
#include "ops/softmax_xent.hpp"
#include "runtime/disk_cache.hpp"
#include "util/platform.hpp"

namespace anycl {
namespace fs = std::filesystem;
namespace {

bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }

// A temporary that anycl's atomic writer left for a cache entry or tuning file, and whose writer
// no longer runs.
bool is_stale_temporary(const std::string& name) {
  const size_t at = name.find(".tmp.");
  if (at == std::string::npos) return false;
  const std::string target = name.substr(0, at);
  long long pid = 0;
  return (detail::is_cache_entry_name(target) || detail::is_tuning_file_name(target)) &&
         is_temporary_name(name, target, &pid) && !detail::platform::process_exists(pid);
}

bool starts_with_line(const std::string& file, const std::string& line) {
  try {
    const std::string text = read_text_file_bounded(file, kMaxTextFileBytes, "tuning file");
    return starts_with(text, line + "\n");
  } catch (const Error&) {
    return false;
  }
}

CacheEntry classify(const fs::path& path, uint64_t bytes) {
  CacheEntry e;
  e.path = path.string();
  e.bytes = bytes;
  const std::string name = path.filename().string();
  if (detail::is_tuning_file_name(name)) {
    e.kind = CacheEntry::Kind::tuning;
  } else if (detail::is_cache_entry_name(name)) {
    e.kind = CacheEntry::Kind::kernel;
    e.program = name.substr(0, name.rfind('-'));
  }
  return e;
}

}  // namespace

std::string cache_dir() { return detail::DiskCache::default_dir(); }

CacheInfo cache_info() {
  CacheInfo info;
  info.dir = cache_dir();
  if (info.dir.empty()) return info;
  std::error_code ec;
  info.exists = fs::is_directory(info.dir, ec);
  fs::path probe = info.dir;  // the nearest folder that exists decides whether it can be created
  while (!probe.empty() && !fs::exists(probe, ec) && probe.has_parent_path() && probe != probe.parent_path())
    probe = probe.parent_path();
  info.writable = detail::platform::folder_is_writable(probe);
  if (!info.exists) return info;
  for (fs::directory_iterator it(info.dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code size_ec;
    if (!it->is_regular_file(size_ec)) continue;
    const uint64_t bytes = it->file_size(size_ec);
    CacheEntry e = classify(it->path(), size_ec ? 0 : bytes);
    (e.kind == CacheEntry::Kind::kernel   ? (++info.kernels, info.kernel_bytes)
     : e.kind == CacheEntry::Kind::tuning ? (++info.tunings, info.tuning_bytes)
                                          : info.other_bytes) += e.bytes;
    info.entries.push_back(std::move(e));
  }
  std::sort(info.entries.begin(), info.entries.end(), [](const CacheEntry& a, const CacheEntry& b) {
    return a.kind != b.kind ? a.kind < b.kind : a.path < b.path;
  });
  return info;
}

size_t clear_cache(bool tuning) {
  // Only what anycl wrote goes: its own names, checked again against the file's first bytes, and
  // the temporaries of such files whose writer has died. Anything else in the folder stays.
  size_t removed = 0;
  for (const CacheEntry& e : cache_info().entries) {
    const std::string name = fs::path(e.path).filename().string();
    const bool ours = e.kind == CacheEntry::Kind::kernel ? detail::has_cache_entry_magic(e.path)
                      : e.kind == CacheEntry::Kind::tuning
                          ? tuning && starts_with_line(e.path, detail::kTuningFileMagic)
                          : is_stale_temporary(name);
    if (!ours) continue;
    std::error_code ec;
    fs::remove(e.path, ec);
    if (ec)
      throw Error(fmt::format("cannot remove cache file '{}': {} — check the folder's permissions", e.path,
                              ec.message()));
    ++removed;
  }
  return removed;
}

CompileStats warm_cache(const std::string& device_spec) {
  RuntimeOptions options;
  options.device_spec = device_spec;
  options.store_program_binaries = true;  // PoCL too: later starts load them, skipping PoCL's front end
  Runtime rt(options);                    // compiles (or loads) every program with the default options
  SoftmaxCrossEntropy variant(rt);        // the work-group-size variant a small device needs, if any
  return rt.stats();
}

}  // namespace anycl
