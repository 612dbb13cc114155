// When a tuning replaces the parameters a device already runs, as plain functions of measured
// times: a result must beat them by a margin (a few per cent measured once on a busy CPU is noise),
// and a quick search stops when the first part of its shortlist shows nothing that does.
#pragma once

#include <cstddef>
#include <vector>

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

/// Rounds of a tune's confirmation: the parameters it would replace and the tuned set applied in
/// turn (ABAB…), the model's GEMMs timed as trained with each, this many times each.
inline constexpr int kConfirmRounds = 3;

/// What a confirmation found: seconds per pass with each set, a round each, and their medians.
struct Confirmation {
  std::vector<double> current, tuned;
  double current_median = 0, tuned_median = 0;
  bool same_sets = false;  // the tuned set is the current one: nothing was timed
  bool confirmed = false;  // the tuned set's median beat the current one's by the margin
};

/// The median of `seconds` (the mean of the middle two for an even count); 0 for none.
double median(std::vector<double> seconds);

/// The verdict on a confirmation's rounds: the tuned set replaces the current one only when its
/// median beats the current one's by kReplaceMargin (and both sets were timed).
Confirmation confirmation_verdict(std::vector<double> current, std::vector<double> tuned);

}  // namespace anycl::detail
