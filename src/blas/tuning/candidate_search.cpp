// Measuring candidate parameter sets and searching from the shortlist (see candidate_search.hpp
// and tuning.hpp): timed through CLBlast's GEMM routine with the switch forced onto the kernel,
// checked for exact results only when a set is the fastest so far.
#include "blas/tuning/candidate_search.hpp"

#include <clblast.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <set>

#include "anycl/blas/blas.hpp"
#include "anycl/error.hpp"
#include "blas/clblast_params.hpp"
#include "blas/gemm_plan.hpp"
#include "blas/tuning/gemm_timing.hpp"
#include "blas/tuning/parameter_space.hpp"
#include "blas/tuning/tuning_margin.hpp"

namespace anycl {
namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kAlwaysDirect = size_t(1) << 20;  // XGEMM_MIN_INDIRECT_SIZE whose cube exceeds any m·n·k

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

GemmTuning only(const std::string& kernel, std::map<std::string, size_t> params) {
  GemmTuning t;
  t.kernels[kernel] = std::move(params);
  return t;
}

std::map<std::string, size_t> current_parameters(Runtime& rt, const std::string& kernel) {
  std::map<std::string, size_t> params;
  const auto status = detail::clblast_params::retrieve(rt.info().id, kernel, params);
  if (status != clblast::StatusCode::kSuccess)
    throw OpenCLError(int(status), "clblast::RetrieveParameters", kernel);
  return params;
}

// "[#####-----]  5/14", the time spent and an estimate of the time left.
std::string progress_bar(size_t done, size_t total, double spent, double budget) {
  const size_t width = 20, filled = total ? done * width / total : width;
  const double left = done ? std::min(budget - spent, spent / double(done) * double(total - done)) : budget;
  return fmt::format("[{}{}] {:>3}/{:<3} {:4.0f} s, ~{:.0f} s left", std::string(filled, '#'),
                     std::string(width - filled, '-'), done, total, spent, std::max(0.0, left));
}

}  // namespace

std::vector<GemmShape> timed_shapes(const std::vector<GemmShape>& shapes) {
  std::vector<GemmShape> out = shapes;
  for (const GemmShape& s : shapes)
    if (!s.trans_a && s.trans_b) {
      GemmShape nn = s;
      nn.trans_b = false, nn.transposes_a = false, nn.label += " as NN";
      out.push_back(nn);
    }
  for (const auto& s : shapes)
    if (s.transposes_a) {
      GemmShape tn = s;
      tn.trans_a = true, tn.trans_b = false, tn.transposes_a = false, tn.label += " as TN";
      out.push_back(tn);
    }
  return out;
}

std::vector<size_t> tn_positions(const std::vector<GemmShape>& shapes) {
  std::vector<size_t> at(shapes.size(), kNoTn);
  size_t next = timed_shapes(shapes).size();
  for (size_t i = shapes.size(); i-- > 0;)
    if (shapes[i].transposes_a) at[i] = --next;
  return at;
}

void measure_candidates(Runtime& rt, const std::vector<TuningCandidate>& candidates,
                        const std::vector<GemmShape>& shapes, double best_seconds, double budget_seconds,
                        const std::function<void(size_t)>& on_start,
                        const std::function<void(const CandidateResult&)>& on_result) {
  const auto start = Clock::now();
  std::map<std::string, std::map<std::string, size_t>> before;
  for (const auto& c : candidates)
    if (!before.count(c.kernel)) before[c.kernel] = current_parameters(rt, c.kernel);
  const auto routine = current_parameters(rt, "GemmRoutine");
  const std::vector<GemmShape> timed = timed_shapes(shapes);
  const std::vector<size_t> tn = tn_positions(shapes);
  detail::ShapeBuffers buffers(rt, timed);
  std::vector<double> transposes(shapes.size(), 0.0);  // anycl's kernel: the same for every candidate
  for (size_t s = 0; s < shapes.size(); ++s)
    if (shapes[s].transposes_a) transposes[s] = detail::dense_transposes_seconds(rt, shapes[s]);
  for (size_t i = 0; i < candidates.size() && since(start) < budget_seconds; ++i) {
    const TuningCandidate& c = candidates[i];
    if (on_start) on_start(i);
    CandidateResult r;
    r.index = i;
    try {
      apply_tuning(rt, only(c.kernel, c.params));
      apply_tuning(
          rt, only("GemmRoutine", {{"XGEMM_MIN_INDIRECT_SIZE", c.kernel == "Xgemm" ? 1 : kAlwaysDirect}}));
      r.shape_seconds = detail::time_each_shape(rt, timed, buffers);
      for (size_t s = 0; s < shapes.size(); ++s) {  // as training runs each on this kernel
        const GemmShape& g = shapes[s];
        const bool as_tn = tn[s] != kNoTn && detail::reads_a_transposed(rt, g.m, g.n, g.k);  // the planner
        r.seconds += (as_tn ? r.shape_seconds[tn[s]] + transposes[s] : r.shape_seconds[s]) * double(g.count);
        if (as_tn) r.transposes_seconds += transposes[s] * double(g.count);
      }
      if (r.seconds < best_seconds) {
        r.error = gemm_mismatch(rt, shapes);
        r.exact = r.error.empty();
        if (r.exact) best_seconds = r.seconds;
      }
    } catch (const Error& e) {
      r.seconds = r.transposes_seconds = 0;
      r.shape_seconds.clear();
      r.error = e.what();
    }
    if (on_result) on_result(r);
  }
  for (const auto& [kernel, params] : before) apply_tuning(rt, only(kernel, params));
  apply_tuning(rt, only("GemmRoutine", routine));
}

std::vector<TuningCandidate> tuning_shortlist(Runtime& rt, const std::string& kernel) {
  const detail::ParameterSpace* space = detail::space_of(kernel);
  if (!space)
    throw ValidationError(fmt::format("no tuning shortlist for '{}': XgemmDirect or Xgemm", kernel));
  std::vector<std::map<std::string, size_t>> sets = {current_parameters(rt, kernel)};
  for (auto& p : database_parameter_sets(kernel)) sets.push_back(std::move(p));
  std::vector<TuningCandidate> out;
  for (auto& p : sets) {
    if (kernel == "Xgemm" && (!p.count("GEMMK") || p.at("GEMMK") != 0)) continue;  // see indirect_space()
    if (!detail::fits(*space, p, rt.info())) continue;
    if (std::none_of(out.begin(), out.end(), [&](const TuningCandidate& c) { return c.params == p; }))
      out.push_back({kernel, std::move(p)});
  }
  return out;
}

namespace detail {

std::string describe(const std::map<std::string, size_t>& p) {
  std::string s;
  for (const auto& [k, v] : p) s += fmt::format(" {}={}", k, v);
  return s;
}

CandidateMeasurer measurer_of(Runtime& rt, const TuneOptions& o) {
  if (o.measure) return o.measure;
  return [&rt, shapes = o.shapes](const std::vector<TuningCandidate>& list, double best, double budget,
                                  const std::function<void(const CandidateResult&)>& on_result) {
    measure_candidates(rt, list, shapes, best, budget, nullptr, on_result);
  };
}

SearchResult search_kernel(Runtime& rt, const std::string& kernel, double seconds, const TuneOptions& o) {
  auto say = [&](const std::string& s) {
    if (o.progress) o.progress(s);
  };
  const auto start = Clock::now();
  const CandidateMeasurer measure = measurer_of(rt, o);
  SearchResult best;
  best.seconds = std::numeric_limits<double>::infinity();
  std::set<std::map<std::string, size_t>> tried;
  std::map<std::map<std::string, size_t>, double> timed;  // every set that ran, and its time
  std::string last_error;
  // One round: measure `list`, report each, keep the fastest exact set. The progress bar counts
  // `total` sets, `done` of them measured before this round (a quick search's shortlist in two rounds).
  auto round = [&](const std::vector<TuningCandidate>& list, const char* what, size_t done = 0,
                   size_t total = 0) {
    if (total == 0) total = list.size();
    const size_t end = done + list.size();
    for (const auto& c : list) tried.insert(c.params);
    measure(list, best.seconds, seconds - since(start), [&](const CandidateResult& r) {
      if (r.index >= list.size()) return;
      ++done;
      best.measured += r.seconds > 0;
      if (r.seconds > 0 && (r.exact || r.error.empty())) {
        timed[list[r.index].params] = r.seconds;
        best.timed_sets.emplace_back(list[r.index].params, r.shape_seconds);
      }
      std::string verdict = r.seconds > 0 ? fmt::format("{:8.3f} ms", r.seconds * 1e3) : "  failed  ";
      if (r.exact && r.seconds < best.seconds) {
        best.params = list[r.index].params, best.seconds = r.seconds, best.shape_seconds = r.shape_seconds;
        verdict += "  exact, fastest so far";
      } else if (!r.error.empty()) {
        verdict += "  refused: " + r.error;
        last_error = r.error;
      }
      say(fmt::format("      {} {} {}:{}", progress_bar(done, total, since(start), seconds), what, verdict,
                      describe(list[r.index].params)));
    });
    if (done < end)
      say(fmt::format("      {} of {} {} sets not measured: the stage's {:.0f} s are spent{}", total - done,
                      total, what, seconds, o.stop && *o.stop ? " or it was stopped" : ""));
    return done;
  };
  const auto shortlist = tuning_shortlist(rt, kernel);
  say(fmt::format(
      "      shortlist: {} known-good {} sets (CLBlast's current first, then anycl's tuning database)",
      shortlist.size(), kernel));
  if (!o.quick) {
    round(shortlist, "shortlist");
  } else {
    // A quick search (first use) measures the rest of its shortlist only when its first part shows
    // a set that beats the parameters the device runs now (the shortlist's first) by the margin.
    const size_t probe = shortlist_probe(shortlist.size());
    const size_t done =
        round({shortlist.begin(), shortlist.begin() + long(probe)}, "shortlist", 0, shortlist.size());
    const auto current = timed.find(current_parameters(rt, kernel));
    const double current_seconds = current == timed.end() ? 0 : current->second;
    if (done == probe && probe < shortlist.size()) {
      if (shortlist_pays(current_seconds, best.seconds))
        round({shortlist.begin() + long(probe), shortlist.end()}, "shortlist", probe, shortlist.size());
      else
        say(fmt::format(
            "      none of the first {} shortlist sets beat the current parameters ({:.3f} ms) by {:.0f} %: "
            "the other {} are not measured",
            probe, current_seconds * 1e3, (kReplaceMargin - 1) * 100, shortlist.size() - probe));
    }
  }
  // The search expands the fastest set not expanded yet (the best first; when its neighbours hold
  // nothing faster, the runner-ups within 25 % of the best), so a stage does not stop at the first
  // local optimum while it has time left.
  const ParameterSpace* space = space_of(kernel);
  std::set<std::map<std::string, size_t>> expanded;
  while (!o.quick && since(start) < seconds && !(o.stop && *o.stop)) {
    const std::map<std::string, size_t>* from = nullptr;
    double from_seconds = 0;
    for (const auto& [params, t] : timed)
      if (!expanded.count(params) && t <= 1.25 * best.seconds && (!from || t < from_seconds))
        from = &params, from_seconds = t;
    if (!from) break;
    expanded.insert(*from);
    std::vector<TuningCandidate> next;
    for (auto& p : neighbours(*space, *from, rt.info()))
      if (!tried.count(p)) next.push_back({kernel, std::move(p)});
    if (next.empty()) continue;
    say(fmt::format("      {} neighbours of a set at {:.3f} ms (best {:.3f} ms)", next.size(),
                    from_seconds * 1e3, best.seconds * 1e3));
    round(next, "neighbour");
  }
  if (best.params.empty())
    throw Error(fmt::format("no {} parameter set computed exact results on {} ({}) — CLBlast's defaults stay",
                            kernel, rt.info().name, last_error.empty() ? "none ran" : last_error));
  say(fmt::format(
      "      best {} set: {:.3f} ms per pass over the model's GEMMs, {} sets timed in {:.0f} s:{}", kernel,
      best.seconds * 1e3, best.measured, since(start), describe(best.params)));
  return best;
}

}  // namespace detail
}  // namespace anycl
