// The on-disk kernel cache as a whole: where it is, what it holds (compiled program binaries and
// CLBlast tuning files), clearing it, and filling it ahead of time for a device.
//
//   anycl::CacheInfo info = anycl::cache_info();   // info.dir, info.entries, info.kernel_bytes
//   anycl::warm_cache("gpu");                       // compile everything for the first GPU now
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "anycl/runtime.hpp"

namespace anycl {

/// One file in the cache folder.
struct CacheEntry {
  enum class Kind { kernel, tuning, other } kind = Kind::other;
  std::string path;
  std::string program;  // kernel entries: the cl_kernels/ program it was compiled from
  uint64_t bytes = 0;
};

/// The cache folder and its contents, kernels first, each sorted by name.
struct CacheInfo {
  std::string dir;        // "" when the cache is off ($ANYCL_CACHE=off)
  bool exists = false;    // the folder is there (it is created on first use)
  bool writable = false;  // a file can be created in it (or in its nearest existing parent)
  std::vector<CacheEntry> entries;
  size_t kernels = 0, tunings = 0;
  uint64_t kernel_bytes = 0, tuning_bytes = 0, other_bytes = 0;
};

/// The cache folder: $ANYCL_CACHE_DIR, $XDG_CACHE_HOME/anycl or ~/.cache/anycl; "" when off.
std::string cache_dir();
/// Lists the cache folder. Never throws for a missing folder (exists = false).
CacheInfo cache_info();
/// Removes the compiled kernels (and, with `tuning`, the CLBlast tuning files too); returns how
/// many files went. Throws Error naming the file that could not be removed.
size_t clear_cache(bool tuning = false);
/// Starts a Runtime on the device `device_spec` selects (as Runtime does) and compiles every
/// program variant anycl uses into the cache; returns what that cost (misses = newly compiled).
CompileStats warm_cache(const std::string& device_spec = "");

}  // namespace anycl
