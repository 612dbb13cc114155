// Linux keeps each process's start time in /proc/self/stat (field 22, clock ticks since boot);
// CLOCK_BOOTTIME counts from the same origin.
#include "process_clock.hpp"

#include <time.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>
#include <string>

namespace anycl::cli {
namespace {

std::optional<double> start_since_boot() {
  std::ifstream in("/proc/self/stat");
  const std::string stat((std::istreambuf_iterator<char>(in)), {});
  const auto paren = stat.rfind(')');  // the command name may hold spaces: fields follow its ')'
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(paren + 2));
  std::string field;
  for (int i = 3; i < 22 && fields >> field;) ++i;  // fields 3…21
  unsigned long long ticks = 0;
  const long hz = sysconf(_SC_CLK_TCK);
  if (!(fields >> ticks) || hz <= 0) return std::nullopt;
  return double(ticks) / double(hz);
}

double boot_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_BOOTTIME, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

}  // namespace

double seconds_since_process_start() {
  static const std::optional<double> start = start_since_boot();
  static const double fallback = boot_seconds();
  return boot_seconds() - (start ? *start : fallback);
}

double process_seconds_at(std::chrono::steady_clock::time_point t) {
  return seconds_since_process_start() -
         std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

}  // namespace anycl::cli
