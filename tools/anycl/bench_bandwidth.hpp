// `anycl bench bandwidth`: on-device copy and triad GB/s and host↔device GB/s, pageable and pinned,
// through Boost.Compute over the runtime's raw OpenCL handles, as an application would.
#pragma once

#include "anycl/runtime.hpp"
#include "bench_common.hpp"

namespace anycl::cli {

/// The table: device copy and triad, host↔device pageable and pinned, in GB/s.
Table bench_bandwidth(Runtime& rt, const BenchSettings& s);

}  // namespace anycl::cli
