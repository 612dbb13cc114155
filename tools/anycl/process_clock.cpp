// The process's age comes from the platform layer (Linux: /proc/self/stat; Windows:
// GetProcessTimes); where it is unknown, the first call's time stands in for the start.
#include "process_clock.hpp"

#include <optional>

#include "util/process.hpp"

namespace anycl::cli {
namespace {

using Clock = std::chrono::steady_clock;

// The process start as a steady-clock time: taken once from the platform's age.
Clock::time_point process_start() {
  static const Clock::time_point start = [] {
    const Clock::time_point now = Clock::now();
    const std::optional<double> age = detail::platform::process_age_seconds();
    return now -
           std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(age.value_or(0.0)));
  }();
  return start;
}

}  // namespace

double seconds_since_process_start() {
  return std::chrono::duration<double>(Clock::now() - process_start()).count();
}

double process_seconds_at(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration<double>(t - process_start()).count();
}

}  // namespace anycl::cli
