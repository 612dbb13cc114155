// Driver set-up checks behind driver_hints.hpp. PoCL keeps compiled kernels in a folder of its own
// and, when it cannot create or write that folder, offers no device or fails every program build
// without saying why; here we find the folder as PoCL 3 chooses it and check it, and say whether
// PoCL keeps a cache at all (anycl then leaves the programs to it).
#include "runtime/driver_hints.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <system_error>

#include "util/platform.hpp"

namespace anycl::detail {
namespace {

namespace fs = std::filesystem;

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  return s;
}

struct CacheFolder {
  fs::path path;
  std::string origin;  // where PoCL took it from, for the message
};

// PoCL keeps what it compiles unless POCL_KERNEL_CACHE is set to a value that does not start with
// "1" (pocl_get_bool_option: "true" or "yes" turn its cache off too).
bool pocl_kernel_cache_on() {
  const auto setting = platform::get_env("POCL_KERNEL_CACHE");
  return !setting || setting->rfind('1', 0) == 0;
}

// PoCL's choice (pocl_cache.c): POCL_CACHE_DIR; else, on Windows, %LOCALAPPDATA%\pocl (or %TEMP%);
// else $XDG_CACHE_HOME/pocl/kcache, $HOME/.cache/pocl/kcache, /tmp/pocl/kcache ("uncached" in
// place of "kcache" when POCL_KERNEL_CACHE turns the cache off).
CacheFolder pocl_cache_folder() {
  using platform::get_env;
  if (const auto dir = get_env("POCL_CACHE_DIR")) return {fs::u8path(*dir), "set by POCL_CACHE_DIR"};
#ifdef _WIN32
  for (const char* name : {"LOCALAPPDATA", "TEMP"})
    if (const auto base = get_env(name))
      return {fs::u8path(*base) / "pocl", fmt::format("PoCL's default under %{}%", name)};
  return {fs::path("pocl"), "PoCL's default"};
#else
  const fs::path sub = fs::path("pocl") / (pocl_kernel_cache_on() ? "kcache" : "uncached");
  const auto xdg = get_env("XDG_CACHE_HOME");
  if (xdg && !xdg->empty()) return {fs::u8path(*xdg) / sub, "PoCL's default under XDG_CACHE_HOME"};
  if (const auto home = get_env("HOME"))
    return {fs::u8path(*home) / ".cache" / sub, "PoCL's default under HOME"};
  return {fs::path("/tmp") / sub, "PoCL's default"};
#endif
}

// Why nobody can create or write files in `folder` (empty when they can): the folder, or the
// nearest part of its path that exists, must be a folder we can create something in. Checked by
// creating (and at once removing) a private folder, since permissions alone do not tell (a
// read-only file system, /proc, an administrator).
std::string unwritable_reason(const fs::path& folder) {
  std::error_code ec;
  fs::path existing = folder;
  while (!fs::exists(fs::status(existing, ec))) {
    const fs::path parent = existing.has_relative_path() ? existing.parent_path() : existing;
    if (parent == existing || parent.empty()) {
      existing = parent.empty() ? fs::path(".") : parent;
      break;
    }
    existing = parent;
  }
  const fs::file_status st = fs::status(existing, ec);
  if (fs::exists(st) && !fs::is_directory(st))
    return fmt::format("'{}' is {}, not a folder", existing.u8string(),
                       fs::is_regular_file(st) ? "a file" : platform::describe(st.type()));
  const fs::path probe = platform::create_private_folder(existing, ".anycl-write-check-", ec);
  if (ec) return fmt::format("nothing can be created in '{}': {}", existing.u8string(), ec.message());
  fs::remove(probe, ec);
  return "";
}

std::string pocl_cache_hint() {
  const CacheFolder cache = pocl_cache_folder();
  const std::string reason = unwritable_reason(cache.path);
  if (reason.empty()) return "";
  return fmt::format(
      "PoCL cannot write its kernel cache at '{}' ({}): {} — make that folder writable, or set "
      "POCL_CACHE_DIR to a writable folder",
      cache.path.u8string(), cache.origin, reason);
}

}  // namespace

bool is_pocl_platform(const std::string& platform_name, const std::string& platform_version) {
  return lower(platform_name).find("portable computing language") != std::string::npos ||
         lower(platform_version).find("pocl") != std::string::npos;
}

std::string driver_program_cache(const std::string& platform_name, const std::string& platform_version) {
  if (!is_pocl_platform(platform_name, platform_version) || !pocl_kernel_cache_on()) return "";
  return pocl_cache_folder().path.u8string();
}

std::string driver_setup_hint(const std::string& platform_name, const std::string& platform_version) {
  if (is_pocl_platform(platform_name, platform_version)) return pocl_cache_hint();
  return "";
}

}  // namespace anycl::detail
