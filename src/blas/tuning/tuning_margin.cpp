// The margin a tuning must win by, and the quick search's early stop (tuning_margin.hpp).
#include "blas/tuning/tuning_margin.hpp"

#include <algorithm>
#include <utility>

namespace anycl::detail {

bool beats_by_margin(double tuned, double current) { return tuned > 0 && tuned * kReplaceMargin <= current; }

size_t shortlist_probe(size_t size) { return std::min(size, std::max<size_t>(3, (size + 2) / 3)); }

bool shortlist_pays(double current_seconds, double best_seconds) {
  return !(current_seconds > 0) || beats_by_margin(best_seconds, current_seconds);
}

double median(std::vector<double> seconds) {
  if (seconds.empty()) return 0;
  std::sort(seconds.begin(), seconds.end());
  const size_t h = seconds.size() / 2;
  return seconds.size() % 2 ? seconds[h] : (seconds[h - 1] + seconds[h]) / 2;
}

Confirmation confirmation_verdict(std::vector<double> current, std::vector<double> tuned) {
  Confirmation c;
  c.current_median = median(current), c.tuned_median = median(tuned);
  c.current = std::move(current), c.tuned = std::move(tuned);
  c.confirmed = c.current_median > 0 && beats_by_margin(c.tuned_median, c.current_median);
  return c;
}

}  // namespace anycl::detail
