// `anycl bench bandwidth`: on-device copy and triad GB/s and host↔device GB/s, pageable and pinned,
// through Boost.Compute over the runtime's raw OpenCL handles, as an application would.
#pragma once

#include <cstddef>

#include "anycl/runtime.hpp"
#include "bench_common.hpp"

namespace anycl::cli {

/// Runs the triad kernel a = b + s·c once over n elements of distinct values and compares every element
/// with the host's arithmetic, then the device's copy of b into a with b. Throws Error on a difference
/// (and for n = 0 or n ≥ 2³²). `bench_bandwidth` makes the same check on its own buffers before timing.
void check_triad(Runtime& rt, size_t n);

/// The table: device copy and triad, host↔device pageable and pinned, in GB/s.
Table bench_bandwidth(Runtime& rt, const BenchSettings& s);

}  // namespace anycl::cli
