// The device's FP32 arithmetic peak, measured: independent multiply-add chains in registers, at
// several vector widths (a CPU's best is its register width: 4 on SSE, 8 on AVX2, 16 on AVX-512;
// OpenCL reports no FLOPs per cycle, and PoCL reports one preferred width whatever its kernel
// library). The figure `anycl bench gemm` puts beside each GEMM as "% of peak".
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "anycl/runtime.hpp"

namespace anycl::cli {

struct MeasuredPeak {
  double gflops = 0;        // the best width's figure
  size_t vector_width = 0;  // floatN of that figure (1: scalar)
  size_t work_items = 0;    // global size of each run
  uint64_t iterations = 0;  // multiply-adds per chain in the timed runs at that width
  std::string widths;       // every width's figure, "1: 12.3, 4: 45.6, …" (GFLOP/s)
};

/// Multiply-add chains per work-item: enough to hide an FMA's latency on two pipes (4 cycles × 2)
/// and a separate multiply and add's (3 + 3 cycles on two pipes each) without spilling 16 registers.
inline constexpr size_t kPeakChains = 12;

/// Runs the chains `work_items` times over at `width` (1, 2, 4, 8 or 16) for a few iterations and checks
/// every work-item's every lane against the host's arithmetic. Throws Error on a difference.
void check_peak_chains(Runtime& rt, size_t width, size_t work_items);

/// Times the chains at widths 1, 2, 4, 8 and 16 (median of `repeats` runs of ≥ 20 ms each) and checks
/// each width's results against the host's arithmetic first. Throws Error when the device's results
/// differ from the host's (then no figure would mean anything).
MeasuredPeak measure_peak(Runtime& rt, int repeats);

}  // namespace anycl::cli
