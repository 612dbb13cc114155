// Running this program again as a child process: for work that may crash inside a driver or a
// library (CLBlast's tuners) and for start-up measurements that need a fresh process.
#pragma once

#include <filesystem>
#include <string>

#include "util/process.hpp"

namespace anycl::cli {

using detail::platform::ProcessSpec;

/// The path of the running anycl executable.
std::string this_executable();

/// How a child ended.
struct ChildExit {
  int code = 0;    // exit code when it exited
  int signal = 0;  // the signal that killed it, 0 when it exited
  bool ok() const noexcept { return code == 0 && signal == 0; }
  /// "exit code 3" or "killed by SIGSEGV".
  std::string describe() const;
};

/// Runs `child`, its output going where ours goes.
ChildExit run_passthrough(const ProcessSpec& child);
/// Runs `child` (stderr joined to stdout) and collects its output.
ChildExit run_captured(const ProcessSpec& child, std::string& output);

}  // namespace anycl::cli
