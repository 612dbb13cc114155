// The one atomic file writer (see the header); operating-system calls go through platform.hpp.
#include "anycl/util/atomic_file.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <random>
#include <string>

#include "anycl/error.hpp"
#include "platform.hpp"

namespace anycl {
namespace fs = std::filesystem;
namespace {

// What to do about a failed create/write/rename, by cause.
std::string advice(const std::error_code& ec) {
  if (ec == std::errc::no_space_on_device) return "free some space and run again";
  if (ec == std::errc::permission_denied || ec == std::errc::operation_not_permitted ||
      ec == std::errc::read_only_file_system)
    return "check that the folder is writable";
  if (ec == std::errc::no_such_file_or_directory) return "check that the folder exists";
  return "check the path and the disk";
}

[[noreturn]] void fail(const std::string& what, const fs::path& path, const std::error_code& ec) {
  throw IoError(fmt::format("cannot {} '{}': {} — {}", what, path.string(), ec.message(), advice(ec)));
}

fs::path folder_of(const fs::path& path) {
  const fs::path parent = path.parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

std::string temporary_name(const fs::path& path) {
  static std::atomic<uint64_t> counter{0};
  static const uint64_t seed = (uint64_t(std::random_device{}()) << 32) ^ std::random_device{}();
  const uint64_t salt = seed + 0x9E3779B97F4A7C15ull * ++counter;
  return fmt::format("{}.tmp.{}.{:016x}", path.filename().string(), detail::platform::process_id(), salt);
}

// A temporary of ours, created exclusively; removed when dropped unless released.
class Temporary {
 public:
  explicit Temporary(const fs::path& target) {
    for (int attempt = 0;; ++attempt) {
      path_ = folder_of(target) / temporary_name(target);
      std::error_code ec;
      file_ = detail::platform::create_exclusive(path_, ec);
      if (!ec) return;
      std::error_code folder_ec;
      if (ec == std::errc::no_such_file_or_directory && fs::is_directory(folder_of(target), folder_ec))
        throw IoError(
            fmt::format("cannot write '{}': the folder '{}' takes no new files ({}) — choose a "
                        "path in a folder you can write to",
                        target.string(), folder_of(target).string(), ec.message()));
      if (ec != std::errc::file_exists || attempt == 8) fail("create a temporary file for", target, ec);
    }
  }
  Temporary(const Temporary&) = delete;
  Temporary& operator=(const Temporary&) = delete;
  ~Temporary() {
    if (path_.empty()) return;
    file_.close();
    std::error_code ignored;
    fs::remove(path_, ignored);
  }
  const fs::path& path() const { return path_; }
  detail::platform::File& file() { return file_; }
  void release() { path_.clear(); }

 private:
  fs::path path_;
  detail::platform::File file_;
};

}  // namespace

bool is_temporary_name(std::string_view name, std::string_view target_name, long long* pid) {
  const std::string_view infix = ".tmp.";
  if (name.size() <= target_name.size() + infix.size() || name.substr(0, target_name.size()) != target_name ||
      name.substr(target_name.size(), infix.size()) != infix)
    return false;
  std::string_view rest = name.substr(target_name.size() + infix.size());
  const size_t dot = rest.find('.');
  if (dot == 0 || dot == std::string_view::npos || dot > 18 || rest.size() - dot - 1 != 16) return false;
  long long value = 0;
  for (char c : rest.substr(0, dot)) {
    if (c < '0' || c > '9') return false;
    value = value * 10 + (c - '0');
  }
  for (char c : rest.substr(dot + 1))
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))) return false;
  if (pid) *pid = value;
  return true;
}

size_t remove_stale_temporaries(const fs::path& path) {
  const std::string target = path.filename().string();
  size_t removed = 0;
  std::error_code ec;
  for (fs::directory_iterator it(folder_of(path), ec), end; !ec && it != end; it.increment(ec)) {
    long long pid = 0;
    std::error_code kind_ec;
    if (!is_temporary_name(it->path().filename().string(), target, &pid) || !it->is_regular_file(kind_ec) ||
        it->is_symlink(kind_ec) || detail::platform::process_exists(pid))
      continue;
    std::error_code rm_ec;
    if (fs::remove(it->path(), rm_ec)) ++removed;
  }
  return removed;
}

namespace {

// What check_output_file checks but the probe: the folder, and what sits at `path`.
void check_output_kind(const fs::path& path) {
  if (path.empty() || !path.has_filename())
    throw ValidationError(
        fmt::format("'{}' is not a file name — give the path of the file to write", path.string()));
  std::error_code ec;
  const fs::path folder = folder_of(path);
  const fs::file_status dir = fs::status(folder, ec);
  if (dir.type() == fs::file_type::not_found)
    throw IoError(
        fmt::format("cannot write '{}': the folder '{}' does not exist — create it or choose another path",
                    path.string(), folder.string()));
  if (dir.type() != fs::file_type::directory)
    throw IoError(fmt::format("cannot write '{}': '{}' is not a folder", path.string(), folder.string()));
  const fs::file_status self = fs::symlink_status(path, ec);
  if (self.type() == fs::file_type::not_found || self.type() == fs::file_type::regular) return;
  // A link is replaced by the new file (never written through); one to a non-regular file is refused
  // all the same, since the user named it as if it were that file.
  const fs::file_status target = self.type() == fs::file_type::symlink ? fs::status(path, ec) : self;
  if (target.type() == fs::file_type::not_found || target.type() == fs::file_type::regular) return;
  throw IoError(
      fmt::format("cannot write '{}': it exists and is {} — anycl replaces only regular files; "
                  "choose another path",
                  path.string(), detail::platform::describe(target.type())));
}

}  // namespace

void check_output_file(const fs::path& path) {
  check_output_kind(path);
  // A folder that exists may still refuse new files (read-only, no permission, /proc): one
  // temporary, created exclusively as a write would create it, then removed, says so before any work.
  const Temporary probe(path);
}

void check_output_is_not_input(const fs::path& input, const fs::path& output) {
  std::error_code ec;
  if (fs::equivalent(input, output, ec) && !ec)
    throw ValidationError(fmt::format("the output '{}' is the input '{}' — choose another output path",
                                      output.string(), input.string()));
}

void write_file_atomically(const fs::path& path, const void* data, size_t size) {
  check_output_kind(path);
  remove_stale_temporaries(path);
  Temporary tmp(path);
  std::error_code ec;
  detail::platform::write(tmp.file(), data, size, ec);
  if (ec) fail("write", path, ec);
  detail::platform::sync(tmp.file(), ec);
  if (ec) fail("write", path, ec);
  if ((ec = tmp.file().close())) fail("write", path, ec);
  check_output_kind(path);  // again: what sits at `path` may have changed while we wrote
  detail::platform::rename_replacing(tmp.path(), path, ec);
  if (ec) fail("rename into place", path, ec);
  tmp.release();
  detail::platform::sync_folder(folder_of(path));  // makes the rename durable; failure loses nothing written
}

void write_file_atomically(const fs::path& path, const std::vector<unsigned char>& bytes) {
  write_file_atomically(path, bytes.data(), bytes.size());
}

void write_file_atomically(const fs::path& path, std::string_view text) {
  write_file_atomically(path, text.data(), text.size());
}

}  // namespace anycl
