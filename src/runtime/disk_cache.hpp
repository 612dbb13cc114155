// On-disk cache of compiled program binaries, shared safely between processes: entries carry
// a checksum and are written to a temporary file and renamed into place.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace anycl {
struct DeviceInfo;
}

namespace anycl::detail {

/// The hash of what makes a device's binaries (and tuning) valid: platform name and version,
/// device name, driver version. Cache keys and tuning file names start from it.
uint64_t device_hash(const DeviceInfo& device);

class DiskCache {
 public:
  /// The directory from $ANYCL_CACHE_DIR, $XDG_CACHE_HOME/anycl or ~/.cache/anycl; "" when
  /// $ANYCL_CACHE=off.
  static std::string default_dir();

  explicit DiskCache(std::string dir);
  const std::string& dir() const noexcept { return dir_; }

  /// The payload stored under `key`, or nothing when absent or corrupt (a corrupt entry is removed).
  std::optional<std::vector<unsigned char>> get(const std::string& key) const;
  /// Stores `payload` atomically; returns false (and leaves the cache as it was) when it cannot.
  bool put(const std::string& key, const std::vector<unsigned char>& payload) const;
  /// The file that holds `key`.
  std::string path(const std::string& key) const;

 private:
  std::string dir_;
};

/// True for the names DiskCache gives its entries: "<program>-<16 lowercase hex>.bin".
bool is_cache_entry_name(const std::string& name);
/// True when `file` is a regular file that starts like a cache entry ("ANYCLBIN").
bool has_cache_entry_magic(const std::string& file);

/// The first line of every tuning file (src/blas/tuning/tuning_file.cpp writes the rest of its
/// format); `anycl cache` recognises tuning files by it.
inline constexpr const char* kTuningFileMagic = "anycl-clblast-tuning 1";
/// The name of a device's tuning file in the cache folder, from device_hash: "clblast-tuning-<16
/// lowercase hex>.txt".
std::string tuning_file_name(uint64_t device_key);
/// True for the names tuning_file_name gives.
bool is_tuning_file_name(const std::string& name);

}  // namespace anycl::detail
