// First-use tuning before `anycl train` (the library's tune_on_first_use, anycl/blas/tune.hpp):
// says what it does and what it found. Opt out with --no-autotune or ANYCL_AUTOTUNE=off.
#pragma once

#include <vector>

#include "anycl/blas/tuning.hpp"
#include "anycl/nn/sequential.hpp"
#include "anycl/runtime.hpp"

namespace anycl::cli {

/// Runs the quick tuning for each distinct device of `runtimes` that needs it, at the GEMMs one step
/// of `model` runs there at `batch` rows (model_gemm_shapes), and applies what it stored to every
/// runtime on that device; says what it chose (stdout) unless `quiet`. A failed tuning is reported
/// on stderr and training goes on with the parameters it had.
void run_first_use_tuning(const std::vector<Runtime*>& runtimes, const Sequential& model, size_t batch,
                          bool quiet);

}  // namespace anycl::cli
