// Listing, clearing and warming the kernel cache folder that Runtime and the tuning files use.
#include "anycl/cache.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "anycl/error.hpp"
#include "anycl/ops/softmax_xent.hpp"
#include "disk_cache.hpp"

namespace anycl {
namespace fs = std::filesystem;
namespace {

bool starts_with(const std::string& s, const std::string& p) { return s.rfind(p, 0) == 0; }
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

CacheEntry classify(const fs::path& path, uint64_t bytes) {
  CacheEntry e;
  e.path = path.string();
  e.bytes = bytes;
  const std::string name = path.filename().string();
  if (starts_with(name, "clblast-tuning-") && ends_with(name, ".txt")) {
    e.kind = CacheEntry::Kind::tuning;
  } else if (ends_with(name, ".bin") && name.find('-') != std::string::npos) {
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
  info.writable = ::access(probe.c_str(), W_OK | X_OK) == 0;
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
  size_t removed = 0;
  for (const CacheEntry& e : cache_info().entries) {
    // Left-over temporary files of an interrupted write go too ("<key>.bin.tmp.<pid>.<n>").
    const bool tmp = e.path.find(".tmp.") != std::string::npos;
    if (!(e.kind == CacheEntry::Kind::kernel || tmp || (tuning && e.kind == CacheEntry::Kind::tuning)))
      continue;
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
  Runtime rt(options);              // compiles (or loads) every program with the default options
  SoftmaxCrossEntropy variant(rt);  // the work-group-size variant a small device needs, if any
  return rt.stats();
}

}  // namespace anycl
