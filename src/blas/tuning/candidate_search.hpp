// The search one tuning stage runs for one CLBlast kernel: the shortlist of known-good sets, then
// (for a full tune) neighbours of the best exact set, until none is faster or the time is spent.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "anycl/blas/tuning.hpp"

namespace anycl::detail {

/// The best exact set of `kernel` found within `seconds`, and its time per pass over the shapes.
struct SearchResult {
  std::map<std::string, size_t> params;
  double seconds = 0;
  size_t measured = 0;                // candidates timed
  std::vector<double> shape_seconds;  // the best set's CandidateResult::shape_seconds
  /// Every set that ran without an error, with its CandidateResult::shape_seconds (not checked for
  /// exact results unless it was the fastest so far): the direct stage's are the sets the switch
  /// stage may choose from for the shapes it sends to the direct kernel.
  std::vector<std::pair<std::map<std::string, size_t>, std::vector<double>>> timed_sets;
};

/// " KEY=VALUE" for each parameter, as the search's progress lines print a set.
std::string describe(const std::map<std::string, size_t>& params);

/// How `options` has candidates measured: `options.measure`, or measure_candidates in this process.
CandidateMeasurer measurer_of(Runtime& rt, const TuneOptions& options);

/// Runs the stage's search with `options.measure` (or in this process). Throws Error naming the
/// kernel when no candidate computed exact results.
SearchResult search_kernel(Runtime& rt, const std::string& kernel, double seconds,
                           const TuneOptions& options);

}  // namespace anycl::detail
