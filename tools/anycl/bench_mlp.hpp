// `anycl bench mlp`: the reference model's training throughput through the real Trainer beside the
// same step on the host (OpenBLAS), with launches, GEMM calls and host waits per step.
#pragma once

#include "anycl/runtime.hpp"
#include "bench_common.hpp"

namespace anycl::cli {

/// The table: the reference MLP's training samples/s through the Trainer beside the same step on
/// the host, with launches and waits per step (and, with --breakdown, a step's commands in s.extra).
Table bench_mlp(Runtime& rt, const BenchSettings& s);

}  // namespace anycl::cli
