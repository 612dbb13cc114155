// Background commands for the tests, through the platform layer (util/process.hpp).
#include "background.hpp"

#include <chrono>
#include <filesystem>
#include <thread>

#include "util/process.hpp"

namespace anycl::test {

std::vector<std::string> shell_command(const std::string& command_line) {
#ifdef _WIN32
  const char* comspec = std::getenv("COMSPEC");
  return {comspec ? comspec : "C:\\Windows\\System32\\cmd.exe", "/c", command_line};
#else
  return {"/bin/sh", "-c", "exec " + command_line};  // exec: the signal reaches the command itself
#endif
}

Background::Background(const std::string& command_line, const std::string& log)
    : process_(std::make_unique<detail::platform::BackgroundProcess>(
          detail::platform::ProcessSpec{shell_command(command_line), {}}, log)) {}

Background::~Background() = default;

void Background::signal(int sig) const { process_->stop(sig); }

int Background::wait() const {
  const detail::platform::ProcessExit e = process_->wait();
  return e.signal ? 128 + e.signal : e.code;
}

bool wait_for_file(const std::string& path, int max_seconds) {
  for (int i = 0; i < max_seconds * 20; ++i) {
    if (std::filesystem::exists(path)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace anycl::test
