// Applying a stored tuning safely at start-up: CLBlast's constraints, then the exact GEMM check,
// run once per device, driver and parameter set and remembered in the kernel cache.
#pragma once

#include "anycl/blas/tuning.hpp"

namespace anycl::detail {

class DiskCache;

/// Applies `tuning` (apply_tuning's checks first), then makes sure it computes exact GEMMs: the
/// verdict of tuning_mismatch() is looked up in `cache` (keyed on the device, its driver and the
/// parameters) and only computed when absent; an exact verdict is stored. When the parameters
/// compute wrong results, CLBlast's earlier parameters are restored and ValidationError says what
/// is wrong; that verdict is cached too, so a refused set is refused again without re-checking.
/// `cache` may be null (the check then runs every time).
void apply_checked_tuning(Runtime& rt, const GemmTuning& tuning, const DiskCache* cache);

/// Stores in `cache` the verdict that `tuning` computes exact GEMMs on `rt`'s device and driver
/// (what a passed check stores): a later apply_checked_tuning of the same sets skips the check.
void remember_exact_tuning(const Runtime& rt, const GemmTuning& tuning, const DiskCache& cache);

}  // namespace anycl::detail
