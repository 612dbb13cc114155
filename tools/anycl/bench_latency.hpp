// `anycl bench latency`: an empty kernel's enqueue → finish, the enqueue rate and a blocking read's
// round trip, through Boost.Compute over the runtime's raw OpenCL handles.
#pragma once

#include "anycl/runtime.hpp"
#include "bench_common.hpp"

namespace anycl::cli {

/// The table: an empty kernel's round trip, back-to-back launches per second, a blocking read.
Table bench_latency(Runtime& rt, const BenchSettings& s);

}  // namespace anycl::cli
