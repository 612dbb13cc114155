// When a tuning replaces the parameters a device already runs, as plain functions of measured
// times: a result must beat them by a margin (a few per cent measured once on a busy CPU is noise),
// and a quick search stops when the first part of its shortlist shows nothing that does.
#pragma once

#include <cstddef>

namespace anycl::detail {

/// A tuning replaces the parameters it was measured against only when it is this much faster.
inline constexpr double kReplaceMargin = 1.05;

/// True when `tuned` seconds per pass beat `current` by kReplaceMargin (tuned × 1.05 ≤ current).
bool beats_by_margin(double tuned, double current);

/// How many sets of a shortlist of `size` a quick search measures before deciding whether the
/// rest can pay: a third, at least 3 (the whole shortlist when it is that short).
size_t shortlist_probe(size_t size);

/// Whether a quick search measures the rest of its shortlist after the probe: the best exact set
/// so far (`best_seconds`) beat the set the device runs now (`current_seconds`, timed in the probe
/// the same way) by the margin. True when the current set has no time (it did not run): nothing to
/// compare with, so the shortlist runs whole.
bool shortlist_pays(double current_seconds, double best_seconds);

}  // namespace anycl::detail
