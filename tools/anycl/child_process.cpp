// Child processes of the anycl command, through the platform layer (util/process.hpp).
#include "child_process.hpp"

#include <fmt/format.h>

#include "anycl/error.hpp"
#include "util/platform.hpp"

namespace anycl::cli {
namespace {

ChildExit convert(const detail::platform::ProcessExit& e) {
  ChildExit c;
  c.code = e.code;
  c.signal = e.signal;
  return c;
}

}  // namespace

std::string this_executable() { return detail::platform::current_executable().string(); }

std::string ChildExit::describe() const {
  if (signal) return "killed by " + detail::platform::signal_name(signal);
  return fmt::format("exit code {}", code);
}

ChildExit run_passthrough(const ProcessSpec& child) { return convert(detail::platform::run_process(child)); }

ChildExit run_captured(const ProcessSpec& child, std::string& output) {
  return convert(detail::platform::run_process(child, &output));
}

}  // namespace anycl::cli
