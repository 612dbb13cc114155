// The margin a tuning must win by, and the quick search's early stop (tuning_margin.hpp).
#include "blas/tuning/tuning_margin.hpp"

#include <algorithm>

namespace anycl::detail {

bool beats_by_margin(double tuned, double current) { return tuned > 0 && tuned * kReplaceMargin <= current; }

size_t shortlist_probe(size_t size) { return std::min(size, std::max<size_t>(3, (size + 2) / 3)); }

bool shortlist_pays(double current_seconds, double best_seconds) {
  return !(current_seconds > 0) || beats_by_margin(best_seconds, current_seconds);
}

}  // namespace anycl::detail
