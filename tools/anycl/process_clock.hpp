// Seconds since this process started (from the kernel's record of its start, so the dynamic
// loading before main() counts too), for start-up figures such as "first training step after".
#pragma once

#include <chrono>

namespace anycl::cli {

/// Seconds from process start to now; from the first call's time where the start is unknown.
double seconds_since_process_start();
/// Seconds from process start to the steady-clock time `t`.
double process_seconds_at(std::chrono::steady_clock::time_point t);

}  // namespace anycl::cli
