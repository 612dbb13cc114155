// A command started in the background (output to a log file), to be signalled and waited for,
// and a bounded wait for a file to appear: the tools of the stop, kill and resume tests.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace anycl::detail::platform {
class BackgroundProcess;
}

namespace anycl::test {

/// SIGKILL's number (9 on every POSIX system; Windows' <csignal> has no name for it).
inline constexpr int kSigKill = 9;

/// The system's shell running `command_line`: /bin/sh -c (POSIX) or cmd.exe /c (Windows).
std::vector<std::string> shell_command(const std::string& command_line);

class Background {
 public:
  Background(const std::string& command_line, const std::string& log);
  ~Background();
  /// Sends `sig` to the command (Windows: Ctrl-Break for SIGINT/SIGTERM, termination for others).
  void signal(int sig) const;
  /// Exit code, or 128 + signal number.
  int wait() const;

 private:
  std::unique_ptr<detail::platform::BackgroundProcess> process_;
};

/// Waits (bounded) until `path` exists; no pass/fail depends on the time it takes.
bool wait_for_file(const std::string& path, int max_seconds = 120);

}  // namespace anycl::test
