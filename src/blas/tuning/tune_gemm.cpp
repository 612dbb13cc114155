// tune_gemm (anycl/blas/tuning.hpp): the stages in order — the baseline, the XgemmDirect and Xgemm
// searches (candidate_search.hpp, candidates timed by the options' measurer), then the switch and
// dx layout, which switch_choice.hpp decides from the times measured here.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "anycl/blas/blas.hpp"
#include "anycl/blas/tuning.hpp"
#include "anycl/error.hpp"
#include "anycl/tensor.hpp"
#include "blas/clblast_params.hpp"
#include "blas/gemm_plan.hpp"
#include "blas/tuning/candidate_search.hpp"
#include "blas/tuning/gemm_timing.hpp"
#include "blas/tuning/switch_choice.hpp"

namespace anycl {
namespace {

constexpr const char* kRoutine = "GemmRoutine";
constexpr const char* kSwitch = "XGEMM_MIN_INDIRECT_SIZE";
// anycl's own choices, stored beside CLBlast's (the GEMM planner's state, gemm_plan.hpp): the dense
// dx layout, measured here, and the convolutions' dW, from the tuning database only
constexpr const char* kDense = detail::kDenseChoices;
constexpr const char* kConv = detail::kConvChoices;

using Clock = std::chrono::steady_clock;
using TimedSets = std::vector<std::pair<std::map<std::string, size_t>, std::vector<double>>>;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Median seconds of one call of `run` (after one untimed call, which compiles).
template <typename Run>
double median_seconds(Runtime& rt, Run&& run) {
  run();
  rt.finish();
  std::vector<double> times;
  for (int r = 0; r < 5; ++r) {
    const auto t0 = Clock::now();
    for (int i = 0; i < 4; ++i) run();
    rt.finish();
    times.push_back(since(t0) / 4);
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

// Median seconds of CLBlast's transpose of a dense layer's W (n×k), the first half of a transposed dx.
double time_transpose(Runtime& rt, size_t n, size_t k) {
  Tensor w(rt, {n, k}), wt(rt, {k, n});
  return median_seconds(rt, [&] { transpose(w, wt); });
}

// What the switch and dx layout are chosen from (switch_choice.hpp): the indirect winner's times
// (`indirect_all`, per timed_shapes) as training runs each shape with that winner's set (`xgemm`),
// and each dense dx's other layout, W's transpose timed here.
detail::SwitchInputs switch_inputs(Runtime& rt, const std::vector<GemmShape>& shapes,
                                   const std::vector<double>& indirect_all,
                                   const std::map<std::string, size_t>& xgemm) {
  const size_t n = shapes.size();
  detail::SwitchInputs in;
  in.shapes = shapes;
  in.indirect.assign(indirect_all.begin(), indirect_all.begin() + long(n));
  in.as_tn.assign(n, false), in.dense_dx.assign(n, false), in.nn_position.assign(n, 0);
  in.nn_indirect.assign(n, 0), in.transpose_w.assign(n, 0);
  for (size_t i = 0, j = n; i < n; ++i)
    if (!shapes[i].trans_a && shapes[i].trans_b) {
      in.dense_dx[i] = true, in.nn_position[i] = j, in.nn_indirect[i] = indirect_all[j], ++j;
      in.transpose_w[i] = time_transpose(rt, shapes[i].n, shapes[i].k);
    }
  // Where the indirect kernel reads A transposed (GEMMK=0), Dense runs its products as TN over its
  // own transposes, whatever the dx layout.
  const std::vector<size_t> tn = tn_positions(shapes);
  for (size_t i = 0; i < n; ++i)
    if (tn[i] != kNoTn && detail::kernel_reads_a_transposed(xgemm)) {  // the GEMM planner's rule
      in.as_tn[i] = true;
      in.indirect[i] = indirect_all[tn[i]] + detail::dense_transposes_seconds(rt, shapes[i]);
    }
  return in;
}

void check_options(const TuneOptions& o) {
  if (o.shapes.empty()) throw ValidationError("tune_gemm: no shapes to tune for");
  for (double f : {o.direct_seconds, o.indirect_seconds})
    if (!(f > 0)) throw ValidationError(fmt::format("a tuning stage needs a positive time, got {} s", f));
  for (const std::string& stage : o.stages)
    if (std::find(std::begin(kTuningStages), std::end(kTuningStages), stage) == std::end(kTuningStages))
      throw ValidationError(
          fmt::format("no tuning stage '{}': the stages are XgemmDirect, Xgemm, GemmRoutine", stage));
}

// One run of tune_gemm: the result so far and the stages' winners' times.
struct Run {
  Runtime& rt;
  const TuneOptions& o;
  GemmTuning t;
  Clock::time_point start = Clock::now();
  // The stages' winners' CandidateResult::shape_seconds.
  std::map<std::string, std::vector<double>> winner_times;
  // Every set the direct and the indirect stage timed (none where a stage was kept from an earlier run).
  TimedSets direct_sets, indirect_sets;
  // The parameters as they were (the device's entry, say): the kernels' sets, the switch, the dx layout.
  std::map<std::string, size_t> was_direct, was_indirect;
  size_t was_switch = 1;
  bool was_transposed = false;

  Run(Runtime& runtime, const TuneOptions& options) : rt(runtime), o(options), t(options.earlier) {
    t.device = rt.info().name;
    t.driver = rt.info().driver_version;
    t.quick = o.quick;
    std::map<std::string, size_t> routine;
    detail::clblast_params::retrieve(rt.info().id, "XgemmDirect", was_direct);
    detail::clblast_params::retrieve(rt.info().id, "Xgemm", was_indirect);
    detail::clblast_params::retrieve(rt.info().id, kRoutine, routine);
    if (routine.count(kSwitch)) was_switch = routine.at(kSwitch);
    was_transposed = detail::gemm_state(rt).transposed_dx;
  }
  bool wanted(const char* stage) const {
    return o.stages.empty() || std::find(o.stages.begin(), o.stages.end(), stage) != o.stages.end();
  }
  void say(const std::string& s) const {
    if (o.progress) o.progress(s);
  }
  void finish_stage(const char* name, Clock::time_point t0) {
    t.seconds = o.earlier.seconds + since(start);
    say(fmt::format("      {} done in {:.0f} s", name, since(t0)));
    if (o.stage_done) o.stage_done(t);
  }
};

// The parameters as they were (the caller may have applied the device's entry): the baseline.
void time_baseline(Run& r) {
  if (r.t.seconds_before > 0) return;  // kept from an earlier run
  detail::ShapeBuffers buffers(r.rt, r.o.shapes);
  r.t.seconds_before = detail::time_shapes(r.rt, r.o.shapes, buffers);
  r.say(fmt::format("      the model's {} GEMMs with the parameters as they were: {:.3f} ms per pass",
                    r.o.shapes.size(), r.t.seconds_before * 1e3));
}

// Stage 1 (XgemmDirect) or 2 (Xgemm): the search for the kernel's set, unless an earlier run has it.
void kernel_stage(Run& r, const char* stage, int number, double seconds) {
  if (!r.wanted(stage)) return;
  if (r.t.kernels.count(stage)) {
    r.say(fmt::format("[{}/3] {}: kept from the earlier run", number, stage));
    return;
  }
  const char* how = r.o.quick ? "the shortlist" : "the shortlist, then neighbours of the best";
  r.say(fmt::format("[{}/3] {} ({} kernel): {}, at most {:.0f} s…", number, stage,
                    number == 1 ? "direct" : "indirect", how, seconds));
  const auto t0 = Clock::now();
  detail::SearchResult found = detail::search_kernel(r.rt, stage, seconds, r.o);
  r.t.kernels[stage] = found.params;
  (number == 1 ? r.direct_sets : r.indirect_sets) = std::move(found.timed_sets);
  r.winner_times[stage] = std::move(found.shape_seconds);
  r.finish_stage(stage, t0);
}

// The stage's winner's times per timed shape; a stage kept from an earlier run has its set timed
// again (in a child process when the CLI measures there).
std::vector<double> stage_times(Run& r, const std::string& stage) {
  const size_t timed_count = timed_shapes(r.o.shapes).size();
  std::vector<double>& times = r.winner_times[stage];
  if (times.size() != timed_count)
    detail::measurer_of(r.rt, r.o)({{stage, r.t.kernels.at(stage)}}, 0, 1e9,
                                   [&](const CandidateResult& c) { times = c.shape_seconds; });
  if (times.size() != timed_count)
    throw Error(
        fmt::format("could not time the {} set at the model's shapes on {} — run `anycl tune "
                    "--reset` and tune again",
                    stage, r.rt.info().name));
  return times;
}

// The times per timed shape of `params` of `stage`: as a stage timed them, else measured now as a
// candidate; nothing when it could not run (or the tuning was stopped).
std::optional<std::vector<double>> times_of(Run& r, const std::string& stage,
                                            const std::map<std::string, size_t>& params,
                                            const TimedSets& sets) {
  const size_t timed_count = timed_shapes(r.o.shapes).size();
  for (const auto& [p, times] : sets)
    if (p == params && times.size() == timed_count) return times;
  std::vector<double> times;
  detail::measurer_of(r.rt, r.o)({{stage, params}}, 0, 1e9,
                                 [&](const CandidateResult& c) { times = c.shape_seconds; });
  if (times.size() != timed_count) return std::nullopt;
  return times;
}

// The parameters as they were, costed as the tuned result is (switch_choice's model of a pass as
// trained, from candidate timings), so that the two compare like with like: timed through gemm()
// at the bare shapes, a Dense product on an indirect kernel that reads A transposed pays CLBlast's
// own transposes, which training does not. Nothing when their sets could not be timed.
std::optional<double> was_as_trained(Run& r) {
  const auto direct = times_of(r, "XgemmDirect", r.was_direct, r.direct_sets);
  const auto indirect = direct ? times_of(r, "Xgemm", r.was_indirect, r.indirect_sets) : std::nullopt;
  if (!direct || !indirect) return std::nullopt;
  const detail::SwitchInputs in = switch_inputs(r.rt, r.o.shapes, *indirect, r.was_indirect);
  return detail::pass_seconds(in, *direct, r.was_switch, r.was_transposed);
}

// The direct stage's best set is the fastest over every shape, the large ones included, which the
// switch then sends to the indirect kernel; a set the stage timed may serve the shapes the switch
// leaves to the direct kernel better (on PoCL's AVX2 class a small-tile set: the MLP's output layer
// at 0.13 ms against 0.67). The fastest such combination is taken once its set passes the exact GEMM
// check (only the stage's fastest so far was checked): `direct_all` and `choice` then become its.
void try_better_direct_set(Run& r, const detail::SwitchInputs& in, std::vector<double>& direct_all,
                           detail::SwitchChoice& choice) {
  const long b =
      detail::better_direct_set(in, r.direct_sets, r.t.kernels.at("XgemmDirect"), direct_all.size(), choice);
  if (b < 0) return;
  const std::map<std::string, size_t>& better = r.direct_sets[size_t(b)].first;
  CandidateResult checked;  // checked and timed again as every candidate is (a child process in the CLI)
  detail::measurer_of(r.rt, r.o)({{"XgemmDirect", better}}, std::numeric_limits<double>::infinity(), 1e9,
                                 [&](const CandidateResult& c) { checked = c; });
  const auto c = detail::accept_direct_set(in, checked, direct_all.size(), choice);
  if (!c) return;
  r.say(
      fmt::format("      direct set for the shapes the switch sends there: {:.3f} instead of {:.3f} ms per "
                  "pass:{}",
                  c->total * 1e3, choice.total * 1e3, detail::describe(better)));
  r.t.kernels["XgemmDirect"] = better;
  direct_all = checked.shape_seconds;
  choice = *c;
}

// Stores and applies the switch and dx layout, and the convolutions' choice of the device's entry.
void apply_choice(Run& r, const detail::SwitchChoice& choice) {
  r.t.kernels[kRoutine] = {{kSwitch, choice.sw}};
  apply_tuning(r.rt, r.t);
  r.t.kernels[kDense] = {{"TRANSPOSED_DX", choice.transposed ? 1 : 0}};
  detail::apply_gemm_choice(r.rt, kDense, r.t.kernels[kDense]);
  // The convolutions' choice is not tuned but comes with the device's database entry: kept in the
  // tuning of its own, which replaces the entry at every later start.
  if (const auto entry = database_tuning(r.rt.info()); entry && entry->kernels.count(kConv)) {
    r.t.kernels[kConv] = entry->kernels.at(kConv);
    detail::apply_gemm_choice(r.rt, kConv, r.t.kernels[kConv]);
  }
}

// A line per shape: its direct and indirect times, and a dense dx's transposed layout.
void report_shapes(const Run& r, const detail::SwitchInputs& in, const std::vector<double>& direct_all) {
  for (size_t i = 0; i < in.shapes.size(); ++i) {
    const auto& s = in.shapes[i];
    const double nn_direct = in.dense_dx[i] ? direct_all[in.nn_position[i]] : 0;
    r.say(fmt::format("      {:<6} {}{} {:>5}x{:>5}x{:>5}: direct {:7.3f} ms, indirect {:7.3f} ms{}{}",
                      s.label, s.trans_a ? 'T' : 'N', s.trans_b ? 'T' : 'N', s.m, s.n, s.k,
                      direct_all[i] * 1e3, in.indirect[i] * 1e3,
                      in.dense_dx[i]
                          ? fmt::format("; transposed: Wᵀ {:.3f} ms + NN direct {:.3f} / indirect {:.3f} ms",
                                        in.transpose_w[i] * 1e3, nn_direct * 1e3, in.nn_indirect[i] * 1e3)
                          : "",
                      in.as_tn[i] ? " (indirect: anycl's transposes + TN, as trained)" : ""));
  }
}

// Stage 3: the switch point and the dense layers' dx layout, chosen together from the two stages'
// winners' times per shape as training runs each (each dense dx, an NT shape, also as the trainer
// can run it on the direct kernel: a transpose of W, then a GEMM NN of the same sizes; a Dense
// product on an indirect kernel that reads A transposed: anycl's transposes, then a GEMM TN), summed
// for every threshold and layout. Nothing of CLBlast's GEMM is compiled here: each switch value is
// a new CLBlast program, minutes on a CPU.
void switch_stage(Run& r) {
  r.say("[3/3] direct/indirect switch and dense dx layout over the model's shapes…");
  const auto t0 = Clock::now();
  std::vector<double> direct_all = stage_times(r, "XgemmDirect");
  const std::vector<double> indirect_all = stage_times(r, "Xgemm");
  std::map<std::string, size_t> xgemm;
  if (r.t.kernels.count("Xgemm"))
    xgemm = r.t.kernels.at("Xgemm");
  else
    detail::clblast_params::retrieve(r.rt.info().id, "Xgemm", xgemm);
  const detail::SwitchInputs in = switch_inputs(r.rt, r.o.shapes, indirect_all, xgemm);
  detail::SwitchChoice choice = detail::choose_switch(in, direct_all);
  try_better_direct_set(r, in, direct_all, choice);
  if (const auto was = was_as_trained(r)) {
    r.t.seconds_before = *was;
    r.say(fmt::format(
        "      the parameters as they were, as trained (switch {}, dense dx as {}): {:.3f} ms per pass",
        r.was_switch, r.was_transposed ? "transpose + GEMM NN" : "GEMM NT", *was * 1e3));
  }
  apply_choice(r, choice);
  report_shapes(r, in, direct_all);
  r.say(fmt::format("      switch {} = {}; dense dx as {}", kSwitch, choice.sw,
                    choice.transposed ? "transpose + GEMM NN" : "GEMM NT"));
  r.t.seconds_after = choice.total;
  r.say(fmt::format(
      "      the model's {} GEMMs tuned: {:.3f} ms per pass as trained, {:.2f}x the parameters as they "
      "were",
      in.shapes.size(), r.t.seconds_after * 1e3, r.t.seconds_before / r.t.seconds_after));
  r.finish_stage("switch", t0);
}

}  // namespace

GemmTuning tune_gemm(Runtime& rt, const TuneOptions& o) {
  check_options(o);
  Run r(rt, o);
  time_baseline(r);
  kernel_stage(r, "XgemmDirect", 1, o.direct_seconds);
  kernel_stage(r, "Xgemm", 2, o.indirect_seconds);
  if (r.wanted("GemmRoutine")) switch_stage(r);
  return r.t;
}

}  // namespace anycl
