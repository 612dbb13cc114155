// A tune's confirmation (full or quick: first use too) before it replaces the parameters a device runs: the
// two sets applied in turn in this process and the model's GEMMs timed as trained with each, so that a
// baseline timed once at the start of a long run on a busy CPU (which drifted from 167 to 291 ms within 12
// minutes, docs/dev/performance-log.md) cannot make a slower set look faster.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "anycl/blas/tuning.hpp"
#include "blas/tuning/tuning_margin.hpp"

namespace anycl::detail {

/// `t` with the choice lines (`anyclDense`, `anyclConv`) it lacks at their defaults: applying it sets
/// those choices as a start with `t` alone has them, whatever was applied before.
GemmTuning whole_tuning(const GemmTuning& t);

/// Whether two tunings run the same GEMMs: the same CLBlast sets and the same anycl choices (a
/// missing `anyclDense` or `anyclConv` line being its defaults). Applies `a` to `rt` to compare.
bool same_sets(Runtime& rt, const GemmTuning& a, const GemmTuning& b);

/// Applies `current` and `tuned` alternately (ABAB…, `rounds` each), each applied whole (a choice
/// line one lacks at its defaults), and after one untimed pass with each (CLBlast compiles what a
/// set needs) times `shapes` as trained with it (pass_seconds_as_trained); the verdict on the
/// rounds (confirmation_verdict). `say` gets a line a round. Leaves `tuned` applied. Identical sets
/// are not timed (same_sets: not confirmed).
Confirmation confirm_tuning(Runtime& rt, const GemmTuning& current, const GemmTuning& tuned,
                            const std::vector<GemmShape>& shapes, int rounds,
                            const std::function<void(const std::string&)>& say);

}  // namespace anycl::detail
