// A command started in the background (output to a log file), to be signalled and waited for,
// and a bounded wait for a file to appear: the tools of the stop, kill and resume tests.
#pragma once

#include <string>

namespace anycl::test {

class Background {
 public:
  Background(const std::string& command_line, const std::string& log);
  /// Sends `sig` to the command.
  void signal(int sig) const;
  /// Exit code, or 128 + signal number.
  int wait() const;

 private:
  long pid_ = -1;
};

/// Waits (bounded) until `path` exists; no pass/fail depends on the time it takes.
bool wait_for_file(const std::string& path, int max_seconds = 120);

}  // namespace anycl::test
