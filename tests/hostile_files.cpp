// Planting hostile files (see the header) through each system's own calls.
#include "hostile_files.hpp"

#include <filesystem>
#include <system_error>

#include "util/process.hpp"
#ifndef _WIN32
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#endif

namespace anycl::test {
namespace fs = std::filesystem;

bool make_fifo(const std::string& path) {
#ifdef _WIN32
  (void)path;
  return false;
#else
  return ::mkfifo(path.c_str(), 0600) == 0;
#endif
}

bool wake_fifo_reader(const std::string& path) {
#ifdef _WIN32
  (void)path;
  return false;
#else
  // O_NONBLOCK: with no reader the open fails at once (ENXIO) instead of waiting for one.
  const int f = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
  if (f < 0) return false;
  ::close(f);
  return true;
#endif
}

std::string character_device() {
#ifdef _WIN32
  return "NUL";
#else
  return "/dev/zero";
#endif
}

bool can_make_symlinks(const std::string& folder) {
  const fs::path probe = fs::path(folder) / "anycl-symlink-probe";
  std::error_code ec;
  fs::create_symlink("anycl-symlink-target", probe, ec);
  if (ec) return false;
  fs::remove(probe, ec);
  return true;
}

int64_t dead_process_id() {
#ifdef _WIN32
  // A child that exits at once: doctest's own --version.
  const auto exit = detail::platform::run_process(
      {{detail::platform::current_executable().string(), "--version"}, {}}, nullptr);
  return exit.pid;
#else
  const pid_t pid = ::fork();
  if (pid == 0) _exit(0);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return pid;
#endif
}

}  // namespace anycl::test
