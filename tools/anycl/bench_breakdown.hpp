// `anycl bench mlp --breakdown` / `--profile`: the profiled training steps as a table (each kernel
// and GEMM of the median step, its share, the gaps) and as a Chrome trace file.
#pragma once

#include <string>

#include "anycl/runtime.hpp"
#include "bench_table.hpp"

namespace anycl::cli {

/// The steps from `first_step` on of the profile `rt` recorded, command by command; writes the
/// whole profile to `trace_path` (Chrome trace JSON) unless it is empty.
Table step_breakdown_table(Runtime& rt, int64_t first_step, const std::string& trace_path);

}  // namespace anycl::cli
