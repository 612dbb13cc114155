// POSIX implementation of the platform layer (Linux, macOS, the BSDs); platform_windows.cpp is
// the other one.
#ifndef _WIN32
#include "platform.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

namespace anycl::detail::platform {
namespace fs = std::filesystem;
namespace {

std::error_code last_error() { return {errno, std::generic_category()}; }
int fd(const File& f) { return static_cast<int>(f.handle()); }

fs::file_type type_of(mode_t mode) {
  if (S_ISREG(mode)) return fs::file_type::regular;
  if (S_ISDIR(mode)) return fs::file_type::directory;
  if (S_ISFIFO(mode)) return fs::file_type::fifo;
  if (S_ISCHR(mode)) return fs::file_type::character;
  if (S_ISBLK(mode)) return fs::file_type::block;
  if (S_ISSOCK(mode)) return fs::file_type::socket;
  if (S_ISLNK(mode)) return fs::file_type::symlink;
  return fs::file_type::unknown;
}

}  // namespace

File& File::operator=(File&& other) noexcept {
  if (this != &other) {
    close();
    handle_ = other.handle_;
    other.handle_ = -1;
  }
  return *this;
}

File::~File() { close(); }

std::error_code File::close() {
  if (handle_ < 0) return {};
  const int rc = ::close(static_cast<int>(handle_));
  handle_ = -1;
  return rc == 0 ? std::error_code() : last_error();
}

File open_for_reading(const fs::path& path, std::error_code& ec) {
  ec.clear();
  // O_NONBLOCK: opening a FIFO with no writer would otherwise wait forever. Reads from a regular
  // file ignore it; anything else is refused by the caller after info().
  const int f = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
  if (f < 0) ec = last_error();
  return File(f);
}

FileInfo info(const File& file, std::error_code& ec) {
  ec.clear();
  struct stat st {};
  if (::fstat(fd(file), &st) != 0) {
    ec = last_error();
    return {};
  }
  return {type_of(st.st_mode), static_cast<uint64_t>(st.st_size)};
}

size_t read(const File& file, void* data, size_t size, std::error_code& ec) {
  ec.clear();
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::read(fd(file), static_cast<char*>(data) + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      ec = last_error();
      break;
    }
    if (n == 0) break;
    done += size_t(n);
  }
  return done;
}

File create_exclusive(const fs::path& path, std::error_code& ec) {
  ec.clear();
  const int f = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC | O_NOCTTY, 0644);
  if (f < 0) ec = last_error();
  return File(f);
}

void write(const File& file, const void* data, size_t size, std::error_code& ec) {
  ec.clear();
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::write(fd(file), static_cast<const char*>(data) + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      ec = n < 0 ? last_error() : std::make_error_code(std::errc::no_space_on_device);
      return;
    }
    done += size_t(n);
  }
}

void sync(const File& file, std::error_code& ec) {
  ec.clear();
  if (::fsync(fd(file)) != 0) ec = last_error();
}

void sync_folder(const fs::path& folder) {
  const int f = ::open(folder.empty() ? "." : folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (f < 0) return;
  (void)::fsync(f);
  ::close(f);
}

void rename_replacing(const fs::path& from, const fs::path& to, std::error_code& ec) {
  ec.clear();
  if (::rename(from.c_str(), to.c_str()) != 0) ec = last_error();
}

fs::path create_private_folder(const fs::path& parent, const std::string& prefix, std::error_code& ec) {
  ec.clear();
  std::string pattern = (parent / (prefix + "XXXXXX")).string();
  if (!::mkdtemp(pattern.data())) {
    ec = last_error();
    return {};
  }
  return pattern;
}

bool folder_is_writable(const fs::path& folder) { return ::access(folder.c_str(), W_OK | X_OK) == 0; }

std::optional<std::string> get_env(const char* name) {
  const char* value = std::getenv(name);
  if (!value) return std::nullopt;
  return std::string(value);
}

void set_env(const char* name, const std::optional<std::string>& value) {
  if (value)
    ::setenv(name, value->c_str(), 1);
  else
    ::unsetenv(name);
}

bool stderr_is_terminal() { return ::isatty(STDERR_FILENO) == 1; }

int64_t process_id() { return ::getpid(); }

bool process_exists(int64_t pid) {
  if (pid <= 0 || pid != static_cast<int64_t>(static_cast<pid_t>(pid))) return false;
  return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH;
}

}  // namespace anycl::detail::platform
#endif  // !_WIN32
