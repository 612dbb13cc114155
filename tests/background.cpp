// Background commands for the tests (POSIX: fork, exec, kill, waitpid).
#include "background.hpp"

#include <doctest/doctest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

namespace anycl::test {

Background::Background(const std::string& command_line, const std::string& log) {
  const pid_t pid = fork();
  REQUIRE(pid >= 0);
  if (pid == 0) {
    const std::string cmd = "exec " + command_line + " >" + log + " 2>&1";
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  pid_ = long(pid);
}

void Background::signal(int sig) const { kill(pid_t(pid_), sig); }

int Background::wait() const {
  int status = 0;
  waitpid(pid_t(pid_), &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool wait_for_file(const std::string& path, int max_seconds) {
  for (int i = 0; i < max_seconds * 20; ++i) {
    if (std::filesystem::exists(path)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace anycl::test
