// The direct/indirect switch and the dense dx layout, chosen from measured times (switch_choice.hpp).
#include "blas/tuning/switch_choice.hpp"

namespace anycl::detail {

size_t cube_root_up(size_t mnk) {
  size_t r = 1;
  while (r * r * r <= mnk) ++r;
  return r;  // the smallest size whose cube exceeds mnk: shapes with m·n·k < r³ go direct
}

std::vector<size_t> switch_candidates(const std::vector<GemmShape>& shapes) {
  std::vector<size_t> candidates = {1, kAlwaysDirect};
  for (const auto& s : shapes) candidates.push_back(cube_root_up(s.m * s.n * s.k));
  return candidates;
}

double pass_seconds(const SwitchInputs& in, const std::vector<double>& d, size_t sw, bool transposed) {
  double total = 0;
  for (size_t i = 0; i < in.shapes.size(); ++i) {
    const GemmShape& s = in.shapes[i];
    const bool go_direct = s.m * s.n * s.k < sw * sw * sw;
    // Where the indirect kernel reads A transposed, Dense runs its products as TN over its own
    // transposes, whatever the dx layout.
    const bool over_tn = !go_direct && in.as_tn[i];
    total +=
        double(s.count) * (in.dense_dx[i] && transposed && !over_tn
                               ? in.transpose_w[i] + (go_direct ? d[in.nn_position[i]] : in.nn_indirect[i])
                               : (go_direct ? d[i] : in.indirect[i]));
  }
  return total;
}

SwitchChoice choose_switch(const SwitchInputs& in, const std::vector<double>& d) {
  SwitchChoice best;
  for (bool transposed : {false, true})
    for (size_t sw : switch_candidates(in.shapes))
      if (const double total = pass_seconds(in, d, sw, transposed); total < best.total)
        best = {total, sw, transposed};
  return best;
}

long better_direct_set(const SwitchInputs& in,
                       const std::vector<std::pair<std::map<std::string, size_t>, std::vector<double>>>& sets,
                       const std::map<std::string, size_t>& winner, size_t timed_count,
                       const SwitchChoice& current) {
  long better = -1;
  SwitchChoice best = current;
  for (size_t i = 0; i < sets.size(); ++i) {
    const auto& [params, times] = sets[i];
    if (times.size() != timed_count || params == winner) continue;
    if (const SwitchChoice c = choose_switch(in, times); c.total < best.total) better = long(i), best = c;
  }
  return better;
}

std::optional<SwitchChoice> accept_direct_set(const SwitchInputs& in, const CandidateResult& checked,
                                              size_t timed_count, const SwitchChoice& current) {
  if (!checked.exact || checked.shape_seconds.size() != timed_count) return std::nullopt;
  const SwitchChoice c = choose_switch(in, checked.shape_seconds);
  if (!(c.total < current.total)) return std::nullopt;
  return c;
}

}  // namespace anycl::detail
