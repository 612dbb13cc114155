// Cache entry format: "ANYCLBIN" | u32 version | u64 payload size | u64 FNV-1a of payload | payload,
// little-endian as written by the host (entries are per-machine).
#include "disk_cache.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

#include "anycl/device.hpp"
#include "hash.hpp"

namespace anycl::detail {
namespace {

constexpr char kMagic[8] = {'A', 'N', 'Y', 'C', 'L', 'B', 'I', 'N'};
constexpr uint32_t kVersion = 1;
constexpr size_t kHeaderSize = sizeof(kMagic) + sizeof(uint32_t) + 2 * sizeof(uint64_t);

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

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
  if (!env("XDG_CACHE_HOME").empty()) return env("XDG_CACHE_HOME") + "/anycl";
  if (!env("HOME").empty()) return env("HOME") + "/.cache/anycl";
  return "";
}

DiskCache::DiskCache(std::string dir) : dir_(std::move(dir)) {}

std::string DiskCache::path(const std::string& key) const { return dir_ + "/" + key + ".bin"; }

std::optional<std::vector<unsigned char>> DiskCache::get(const std::string& key) const {
  std::ifstream in(path(key), std::ios::binary);
  if (!in) return std::nullopt;
  char header[kHeaderSize];
  uint32_t version = 0;
  uint64_t size = 0, checksum = 0;
  bool ok = bool(in.read(header, kHeaderSize)) && std::memcmp(header, kMagic, sizeof(kMagic)) == 0;
  if (ok) {
    std::memcpy(&version, header + 8, 4);
    std::memcpy(&size, header + 12, 8);
    std::memcpy(&checksum, header + 20, 8);
    ok = version == kVersion && size < (uint64_t(1) << 32);
  }
  std::vector<unsigned char> payload;
  if (ok) {
    payload.resize(size);
    ok = bool(in.read(reinterpret_cast<char*>(payload.data()), std::streamsize(size))) &&
         in.peek() == std::char_traits<char>::eof() && fnv1a(payload.data(), payload.size()) == checksum;
  }
  if (!ok) {
    std::error_code ignored;
    std::filesystem::remove(path(key), ignored);
    return std::nullopt;
  }
  return payload;
}

bool DiskCache::put(const std::string& key, const std::vector<unsigned char>& payload) const {
  std::error_code ec;
  std::filesystem::create_directories(dir_, ec);
  if (ec) return false;
  std::random_device rd;
  const std::string tmp = fmt::format("{}.tmp.{}.{:x}", path(key), ::getpid(), rd());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    const uint64_t size = payload.size(), checksum = fnv1a(payload.data(), payload.size());
    out.write(kMagic, sizeof(kMagic));
    out.write(reinterpret_cast<const char*>(&kVersion), sizeof(kVersion));
    out.write(reinterpret_cast<const char*>(&size), sizeof(size));
    out.write(reinterpret_cast<const char*>(&checksum), sizeof(checksum));
    out.write(reinterpret_cast<const char*>(payload.data()), std::streamsize(payload.size()));
    out.flush();
    if (!out) {
      out.close();
      std::filesystem::remove(tmp, ec);
      return false;
    }
  }
  std::filesystem::rename(tmp, path(key), ec);  // atomic on POSIX: readers see old or new, never half
  if (ec) std::filesystem::remove(tmp, ec);
  return !ec;
}

}  // namespace anycl::detail
