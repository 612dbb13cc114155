// Applying a stored tuning safely at start-up: CLBlast's constraints, then the exact GEMM check,
// run once per device, driver and parameter set and remembered in the kernel cache.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "anycl/blas/tuning.hpp"

namespace anycl::detail {

class DiskCache;

/// Applies `tuning` (apply_tuning's checks first), then makes sure it computes exact GEMMs: CLBlast's
/// GEMM routine as `tuning` sets it up runs the reference model's shapes and odd sizes on both sides
/// of its direct/indirect switch, each on the kernel the switch picks (a kernel the switch never
/// picks never runs, so it is not checked; CLBlast still compiles it into the same program) — but for
/// a switch over 512, past the odd sizes' reach, the tuning's Xgemm set is also checked with the
/// routine forced onto it. Each of its sets for some products (product_xgemm_sets) runs the odd
/// sizes its switch sends to the indirect kernel as Xgemm, as those products do (XgemmSetScope: the
/// program training compiles for them), or, past 512, forced as the Xgemm set is. The verdict is
/// looked up in `cache` (keyed on the device, its driver and the parameters) and only computed when absent;
/// an exact verdict is stored. When the parameters compute wrong results, CLBlast's earlier parameters are
/// restored and ValidationError says what is wrong; that verdict is cached too, so a refused set is refused
/// again without re-checking. `cache` may be null (the check then runs every time).
void apply_checked_tuning(Runtime& rt, const GemmTuning& tuning, const DiskCache* cache);

/// The Xgemm sets `tuning` names for some products (its anyclConvDwXgemm, anyclDenseXgemm and
/// anyclConvWinogradXgemm lines, gemm_plan.hpp), by line: each that is not empty and not its Xgemm
/// set. The exact checks run each of them besides the Xgemm set.
std::vector<std::pair<std::string, std::map<std::string, size_t>>> product_xgemm_sets(
    const GemmTuning& tuning);

/// Odd sizes in all four transposes that the switch `min_indirect` (XGEMM_MIN_INDIRECT_SIZE) sends to
/// the indirect kernel; gemm_mismatch's own odd sizes are small, so they take the direct one wherever
/// there is a switch, and the check meets odd sizes on both kernels. None for a switch of 1 (every
/// size is indirect already) or over 512 (beyond a host loop's reach at start-up).
std::vector<GemmShape> odd_shapes_over(size_t min_indirect);

/// The shape gemm_mismatch checks for `s`: sides over 640 shortened to 512 plus their remainder modulo
/// 128 (the same partial tiles for every tile size up to 128), unless that would move it across the
/// device's current direct/indirect switch (then `s` itself), so a 4096³ GEMM is checked at 512³.
GemmShape checked_gemm_shape(Runtime& rt, const GemmShape& s);

/// Stores in `cache` the verdict that `tuning` computes exact GEMMs on `rt`'s device and driver
/// (what a passed check stores): a later apply_checked_tuning of the same sets skips the check.
void remember_exact_tuning(const Runtime& rt, const GemmTuning& tuning, const DiskCache& cache);

}  // namespace anycl::detail
