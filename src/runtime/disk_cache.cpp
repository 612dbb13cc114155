// Cache entry format: "ANYCLBIN" | u32 version | u64 payload size | u64 FNV-1a of payload | payload,
// little-endian as written by the host (entries are per-machine).
#include "runtime/disk_cache.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "anycl/device.hpp"
#include "anycl/error.hpp"
#include "anycl/util/atomic_file.hpp"
#include "anycl/util/bounded_read.hpp"
#include "hash.hpp"
#include "util/platform.hpp"

namespace anycl::detail {
namespace {

constexpr char kMagic[8] = {'A', 'N', 'Y', 'C', 'L', 'B', 'I', 'N'};
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderSize = sizeof(kMagic) + sizeof(uint32_t) + 2 * sizeof(uint64_t);
// No compiled program comes near this; a larger file under an entry's name is not an entry.
constexpr uint64_t kMaxEntryBytes = uint64_t{1} << 30;

std::string env(const char* name) { return platform::get_env(name).value_or(""); }

}  // namespace

uint64_t device_hash(const DeviceInfo& d) {
  uint64_t h = fnv1a(d.platform_name);
  for (const std::string* part : {&d.platform_version, &d.name, &d.driver_version}) h = fnv1a(*part, h);
  return h;
}

std::string DiskCache::default_dir() {
  const std::string mode = env("ANYCL_CACHE");
  if (mode == "off" || mode == "0" || mode == "false") return "";
  if (!env("ANYCL_CACHE_DIR").empty()) return env("ANYCL_CACHE_DIR");
#ifdef _WIN32
  if (!env("LOCALAPPDATA").empty()) return env("LOCALAPPDATA") + "/anycl";  // per user, not roaming
#endif
  if (!env("XDG_CACHE_HOME").empty()) return env("XDG_CACHE_HOME") + "/anycl";
  if (!env("HOME").empty()) return env("HOME") + "/.cache/anycl";
  return "";
}

DiskCache::DiskCache(std::string dir) : dir_(std::move(dir)) {}

std::string DiskCache::path(const std::string& key) const { return dir_ + "/" + key + ".bin"; }

std::optional<std::vector<unsigned char>> DiskCache::get(const std::string& key) const {
  const std::string file = path(key);
  std::vector<unsigned char> bytes;
  try {
    bytes = read_file_bounded(file, kMaxEntryBytes, "kernel-cache entry");
  } catch (const DataError&) {
    // Missing is the normal miss. A FIFO or device under our name is not ours to remove (put()
    // refuses to replace it too); a regular file past the cap is a corrupt entry and goes.
    std::error_code ec;
    if (std::filesystem::symlink_status(file, ec).type() == std::filesystem::file_type::regular)
      std::filesystem::remove(file, ec);
    return std::nullopt;
  }
  uint32_t version = 0;
  uint64_t size = 0, checksum = 0;
  bool ok = bytes.size() >= kHeaderSize && std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) == 0;
  if (ok) {
    std::memcpy(&version, bytes.data() + 8, 4);
    std::memcpy(&size, bytes.data() + 12, 8);
    std::memcpy(&checksum, bytes.data() + 20, 8);
    // The size field must describe the file exactly: a corrupt one is dropped, never allocated.
    ok = version == kVersion && size == bytes.size() - kHeaderSize &&
         fnv1a(bytes.data() + kHeaderSize, size) == checksum;
  }
  if (!ok) {
    std::error_code ignored;
    std::filesystem::remove(file, ignored);
    return std::nullopt;
  }
  bytes.erase(bytes.begin(), bytes.begin() + kHeaderSize);
  return bytes;
}

bool DiskCache::put(const std::string& key, const std::vector<unsigned char>& payload) const {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) return false;
  const uint64_t size = payload.size(), checksum = fnv1a(payload.data(), payload.size());
  std::vector<unsigned char> bytes(kHeaderSize + payload.size());
  std::memcpy(bytes.data(), kMagic, sizeof(kMagic));
  std::memcpy(bytes.data() + 8, &kVersion, 4);
  std::memcpy(bytes.data() + 12, &size, 8);
  std::memcpy(bytes.data() + 20, &checksum, 8);
  if (!payload.empty()) std::memcpy(bytes.data() + kHeaderSize, payload.data(), payload.size());
  try {
    write_file_atomically(path(key), bytes);  // readers see the old entry or the new one, never half
  } catch (const Error&) {
    return false;
  }
  return true;
}

bool is_cache_entry_name(const std::string& name) {
  // "<program>-<16 hex>.bin", as Runtime names its keys.
  constexpr size_t kTail = 1 + 16 + 4;
  if (name.size() <= kTail || name.compare(name.size() - 4, 4, ".bin") != 0 ||
      name[name.size() - kTail] != '-')
    return false;
  for (size_t i = name.size() - kTail + 1; i < name.size() - 4; ++i)
    if (!std::isxdigit(static_cast<unsigned char>(name[i])) ||
        std::isupper(static_cast<unsigned char>(name[i])))
      return false;
  for (size_t i = 0; i < name.size() - kTail; ++i)
    if (!(std::isalnum(static_cast<unsigned char>(name[i])) || name[i] == '_')) return false;
  return true;
}

bool has_cache_entry_magic(const std::string& file) {
  try {
    const auto bytes = read_file_bounded(file, kMaxEntryBytes, "kernel-cache entry");
    return bytes.size() >= kHeaderSize && std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) == 0;
  } catch (const DataError&) {
    return false;
  }
}

std::string tuning_file_name(uint64_t device_key) {
  return fmt::format("clblast-tuning-{:016x}.txt", device_key);
}

bool is_tuning_file_name(const std::string& name) {
  const std::string head = "clblast-tuning-", tail = ".txt";
  if (name.size() != head.size() + 16 + tail.size() || name.compare(0, head.size(), head) != 0 ||
      name.compare(name.size() - tail.size(), tail.size(), tail) != 0)
    return false;
  return std::all_of(name.begin() + long(head.size()), name.end() - long(tail.size()),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

}  // namespace anycl::detail
