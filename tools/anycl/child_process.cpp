#include "child_process.hpp"

#include <fmt/format.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "anycl/error.hpp"

namespace anycl::cli {
namespace {

ChildExit decode(int status) {
  ChildExit e;
  if (status == -1) {
    e.code = 127;
  } else if (WIFSIGNALED(status)) {
    e.signal = WTERMSIG(status);
  } else if (WIFEXITED(status)) {
    e.code = WEXITSTATUS(status);
    if (e.code > 128 && e.code < 128 + 65) e.signal = e.code - 128, e.code = 0;  // reported by the shell
  }
  return e;
}

}  // namespace

std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string this_executable() {
  std::error_code ec;
  const auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error("cannot find this program (/proc/self/exe): " + ec.message());
  return shell_quote(path.string());
}

ScratchDir::ScratchDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "anycl-child-XXXXXX").string();
  if (!mkdtemp(pattern.data()))
    throw Error(fmt::format("cannot create a folder in {}: {} — check TMPDIR",
                            std::filesystem::temp_directory_path().string(), std::strerror(errno)));
  path_ = pattern;
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

std::string ChildExit::describe() const {
  if (signal) {
    const char* name = sigabbrev_np(signal);
    return fmt::format("killed by SIG{}", name ? name : std::to_string(signal));
  }
  return fmt::format("exit code {}", code);
}

ChildExit run_passthrough(const std::string& command) {
  std::fflush(stdout);
  std::fflush(stderr);
  return decode(std::system(command.c_str()));
}

ChildExit run_captured(const std::string& command, std::string& output) {
  std::fflush(stdout);
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (!pipe) throw Error("cannot start a child process: " + std::string(std::strerror(errno)));
  std::array<char, 4096> buffer{};
  while (size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe)) output.append(buffer.data(), n);
  return decode(pclose(pipe));
}

}  // namespace anycl::cli
