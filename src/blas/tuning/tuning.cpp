// CLBlast tuning: searching parameters with CLBlast's tuning API and applying them with
// OverrideParameters. The tuning file's text form is in tuning_file.cpp.
#include "anycl/blas/tuning.hpp"

#include "anycl/nn/model_from_flags.hpp"
#include "anycl/nn/sequential.hpp"

#include <clblast.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <limits>

#include "anycl/blas/blas.hpp"
#include "anycl/error.hpp"
#include "blas/clblast_params.hpp"
#include "blas/gemm_plan.hpp"
#include "blas/tuning/candidate_search.hpp"
#include "blas/tuning/gemm_timing.hpp"
#include "blas/tuning/switch_choice.hpp"
#include "blas/tuning/tuning_constraints.hpp"

namespace anycl {
namespace {

constexpr const char* kRoutine = "GemmRoutine";
constexpr const char* kSwitch = "XGEMM_MIN_INDIRECT_SIZE";
// anycl's own choices, stored beside CLBlast's (the GEMM planner's state, gemm_plan.hpp): the dense
// dx layout, measured here, and the convolutions' dW, from the tuning database only
constexpr const char* kDense = detail::kDenseChoices;
constexpr const char* kConv = detail::kConvChoices;

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

void check(clblast::StatusCode status, const std::string& call, const std::string& where) {
  if (status != clblast::StatusCode::kSuccess) throw OpenCLError(int(status), call, where);
}

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

GemmTuning only(const std::string& kernel, std::map<std::string, size_t> params) {
  GemmTuning t;
  t.kernels[kernel] = std::move(params);
  return t;
}

}  // namespace

std::vector<GemmShape> model_gemm_shapes(const Sequential& model, size_t batch) {
  std::vector<GemmShape> forward, backward;
  Shape in = model.input_shape();
  std::vector<std::vector<GemmShape>> per_layer;
  for (size_t i = 0; i < model.layers().size(); ++i) {
    const Layer& layer = *model.layers()[i];
    auto g = layer.gemm_shapes(in, batch, /*need_dx=*/i > 0);
    if (!g.empty()) per_layer.push_back(std::move(g));
    in = layer.output_shape(in);
  }
  for (size_t i = 0; i < per_layer.size(); ++i)
    for (GemmShape g : per_layer[i])
      if (g.label == "fwd") forward.push_back((g.label += " " + std::to_string(i + 1), g));
  for (size_t i = per_layer.size(); i-- > 0;)
    for (GemmShape g : per_layer[i])
      if (g.label != "fwd") backward.push_back((g.label += " " + std::to_string(i + 1), g));
  forward.insert(forward.end(), backward.begin(), backward.end());
  return forward;
}

std::vector<GemmShape> reference_model_gemm_shapes(size_t batch) {
  return model_gemm_shapes(Sequential(reference_mlp()), batch);
}

void apply_tuning(Runtime& rt, const GemmTuning& t) {
  // Everything is checked before anything is applied, so a refused tuning leaves CLBlast as it was.
  if (const std::string wrong = detail::tuning_constraint_violation(t); !wrong.empty())
    throw ValidationError(
        fmt::format("CLBlast tuning refused: {} — CLBlast would compute wrong results with it", wrong));
  for (const auto& [name, params] : t.kernels) {
    if (detail::is_gemm_choice(name)) continue;
    std::map<std::string, size_t> expected;
    check(detail::clblast_params::retrieve(rt.info().id, name, expected), "clblast::RetrieveParameters",
          name);
    for (const auto& [key, value] : expected)
      if (!params.count(key))
        throw ValidationError(
            fmt::format("CLBlast tuning refused: {} lacks the parameter {} that CLBlast on {} needs", name,
                        key, rt.info().name));
    for (const auto& [key, value] : params)
      if (!expected.count(key))
        throw ValidationError(
            fmt::format("CLBlast tuning refused: {} has the parameter {}, which CLBlast on {} does "
                        "not know",
                        name, key, rt.info().name));
  }
  for (const auto& [name, params] : t.kernels) {
    if (detail::is_gemm_choice(name)) {
      detail::apply_gemm_choice(rt, name, params);
      continue;
    }
    check(detail::clblast_params::override_parameters(rt.info().id, name, params),
          "clblast::OverrideParameters",
          fmt::format("kernel {} on {} — run `anycl tune --reset` and tune again", name, rt.info().name));
  }
  detail::forget_gemm_layout(rt);  // the GEMM planner asks CLBlast for the (maybe new) switch again
}

bool tuning_complete(const GemmTuning& t) {
  for (const char* stage : kTuningStages)
    if (!t.kernels.count(stage)) return false;
  return true;
}

namespace {

std::map<std::string, size_t> current_parameters(Runtime& rt, const std::string& kernel) {
  std::map<std::string, size_t> params;
  check(detail::clblast_params::retrieve(rt.info().id, kernel, params), "clblast::RetrieveParameters",
        kernel);
  return params;
}

// What is wrong when `kernel` runs with `params`, the GEMM routine forced onto it (`force_switch`),
// at `shapes` and some odd sizes; "" when every result is exact. CLBlast's parameters are left as
// they were.
std::string kernel_mismatch(Runtime& rt, const std::string& kernel,
                            const std::map<std::string, size_t>& params, size_t force_switch,
                            const std::vector<GemmShape>& shapes) {
  // Sets CLBlast is known to compute wrongly are refused before anything compiles.
  if (std::string wrong = detail::tuning_constraint_violation(only(kernel, params)); !wrong.empty())
    return wrong;
  const auto before = current_parameters(rt, kernel), routine = current_parameters(rt, kRoutine);
  apply_tuning(rt, only(kernel, params));
  apply_tuning(rt, only(kRoutine, {{kSwitch, force_switch}}));
  auto restore = [&] {
    apply_tuning(rt, only(kRoutine, routine));
    apply_tuning(rt, only(kernel, before));
  };
  std::string wrong;
  try {
    wrong = gemm_mismatch(rt, shapes);
  } catch (...) {  // it could not run (a build failure, say): not a verdict on the parameters
    restore();
    throw;
  }
  restore();
  return wrong;
}

}  // namespace

std::string tuning_mismatch(Runtime& rt, const GemmTuning& tuning, const std::vector<GemmShape>& shapes) {
  for (const auto& [kernel, force_switch] :
       {std::pair<const char*, size_t>{"XgemmDirect", detail::kAlwaysDirect},
        std::pair<const char*, size_t>{"Xgemm", 1}}) {
    const auto it = tuning.kernels.find(kernel);
    if (it == tuning.kernels.end()) continue;
    if (std::string wrong = kernel_mismatch(rt, kernel, it->second, force_switch, shapes); !wrong.empty())
      return fmt::format("{}: {}", kernel, wrong);
  }
  return "";
}

GemmTuning tune_gemm(Runtime& rt, const TuneOptions& o) {
  if (o.shapes.empty()) throw ValidationError("tune_gemm: no shapes to tune for");
  for (double f : {o.direct_seconds, o.indirect_seconds})
    if (!(f > 0)) throw ValidationError(fmt::format("a tuning stage needs a positive time, got {} s", f));
  for (const std::string& stage : o.stages)
    if (std::find(std::begin(kTuningStages), std::end(kTuningStages), stage) == std::end(kTuningStages))
      throw ValidationError(
          fmt::format("no tuning stage '{}': the stages are XgemmDirect, Xgemm, GemmRoutine", stage));
  auto wanted = [&](const char* stage) {
    return o.stages.empty() || std::find(o.stages.begin(), o.stages.end(), stage) != o.stages.end();
  };
  auto say = [&](const std::string& s) {
    if (o.progress) o.progress(s);
  };
  const auto start = Clock::now();
  GemmTuning t = o.earlier;
  t.device = rt.info().name;
  t.driver = rt.info().driver_version;
  t.quick = o.quick;
  auto finish_stage = [&](const char* name, Clock::time_point t0) {
    t.seconds = o.earlier.seconds + since(start);
    say(fmt::format("      {} done in {:.0f} s", name, since(t0)));
    if (o.stage_done) o.stage_done(t);
  };
  detail::ShapeBuffers buffers(rt, o.shapes);
  if (t.seconds_before <=
      0) {  // the parameters as they were (the caller may have applied the device's entry): the baseline
    t.seconds_before = detail::time_shapes(rt, o.shapes, buffers);
    say(fmt::format("      the model's {} GEMMs with the parameters as they were: {:.3f} ms per pass",
                    o.shapes.size(), t.seconds_before * 1e3));
  }
  // The stages' winners' CandidateResult::shape_seconds; a stage kept from an earlier run has its set
  // timed again (in a child process when the CLI measures there).
  const size_t timed_count = timed_shapes(o.shapes).size();
  std::map<std::string, std::vector<double>> winner_times;
  auto stage_times = [&](const std::string& stage) {
    std::vector<double>& times = winner_times[stage];
    if (times.size() != timed_count)
      detail::measurer_of(rt, o)({{stage, t.kernels.at(stage)}}, 0, 1e9,
                                 [&](const CandidateResult& r) { times = r.shape_seconds; });
    if (times.size() != timed_count)
      throw Error(
          fmt::format("could not time the {} set at the model's shapes on {} — run `anycl tune "
                      "--reset` and tune again",
                      stage, rt.info().name));
    return times;
  };
  // Every set the direct stage timed (none where the stage was kept from an earlier run).
  std::vector<std::pair<std::map<std::string, size_t>, std::vector<double>>> direct_sets;
  const char* how = o.quick ? "the shortlist" : "the shortlist, then neighbours of the best";
  for (const auto& [stage, seconds] : {std::pair<const char*, double>{"XgemmDirect", o.direct_seconds},
                                       std::pair<const char*, double>{"Xgemm", o.indirect_seconds}}) {
    const int number = std::string(stage) == "XgemmDirect" ? 1 : 2;
    if (!wanted(stage)) continue;
    if (t.kernels.count(stage)) {
      say(fmt::format("[{}/3] {}: kept from the earlier run", number, stage));
      continue;
    }
    say(fmt::format("[{}/3] {} ({} kernel): {}, at most {:.0f} s…", number, stage,
                    number == 1 ? "direct" : "indirect", how, seconds));
    const auto t0 = Clock::now();
    detail::SearchResult found = detail::search_kernel(rt, stage, seconds, o);
    t.kernels[stage] = found.params;
    if (number == 1) direct_sets = std::move(found.timed_sets);
    winner_times[stage] = std::move(found.shape_seconds);
    finish_stage(stage, t0);
  }

  if (!wanted("GemmRoutine")) return t;
  // The switch point and the dense layers' dx layout, chosen together from the two stages' winners'
  // times per shape as training runs each (each dense dx, an NT shape, also as the trainer can run it
  // on the direct kernel: a transpose of W, then a GEMM NN of the same sizes; a Dense product on an
  // indirect kernel that reads A transposed: anycl's transposes, then a GEMM TN), summed for every
  // threshold and layout. Nothing of CLBlast's GEMM is compiled here: each switch value is a new
  // CLBlast program, minutes on a CPU.
  say("[3/3] direct/indirect switch and dense dx layout over the model's shapes…");
  const auto t0 = Clock::now();
  const size_t n = o.shapes.size();
  std::vector<double> direct_all = stage_times("XgemmDirect");
  const std::vector<double> indirect_all = stage_times("Xgemm");
  std::map<std::string, size_t> xgemm;
  if (t.kernels.count("Xgemm"))
    xgemm = t.kernels.at("Xgemm");
  else
    detail::clblast_params::retrieve(rt.info().id, "Xgemm", xgemm);
  const detail::SwitchInputs in = switch_inputs(rt, o.shapes, indirect_all, xgemm);
  detail::SwitchChoice choice = detail::choose_switch(in, direct_all);
  // The direct stage's best set is the fastest over every shape, the large ones included, which the
  // switch then sends to the indirect kernel; a set the stage timed may serve the shapes the
  // switch leaves to the direct kernel better (on PoCL's AVX2 class a small-tile set: the MLP's
  // output layer at 0.13 ms against 0.67). The fastest such combination is taken once its set
  // passes the exact GEMM check (only the stage's fastest so far was checked).
  if (const long b =
          detail::better_direct_set(in, direct_sets, t.kernels.at("XgemmDirect"), direct_all.size(), choice);
      b >= 0) {
    const std::map<std::string, size_t>& better = direct_sets[size_t(b)].first;
    CandidateResult checked;  // checked and timed again as every candidate is (a child process in the CLI)
    detail::measurer_of(rt, o)({{"XgemmDirect", better}}, std::numeric_limits<double>::infinity(), 1e9,
                               [&](const CandidateResult& r) { checked = r; });
    const detail::SwitchChoice c = checked.exact && checked.shape_seconds.size() == direct_all.size()
                                       ? detail::choose_switch(in, checked.shape_seconds)
                                       : detail::SwitchChoice{};
    if (c.total < choice.total) {
      say(fmt::format(
          "      direct set for the shapes the switch sends there: {:.3f} instead of {:.3f} ms per "
          "pass:{}",
          c.total * 1e3, choice.total * 1e3, detail::describe(better)));
      t.kernels["XgemmDirect"] = better;
      direct_all = checked.shape_seconds;
      choice = c;
    }
  }
  const size_t best_switch = choice.sw;
  const bool use_transposed = choice.transposed;
  const double best_total = choice.total;
  std::vector<double> direct(direct_all.begin(), direct_all.begin() + long(n)), nn_direct(n);
  for (size_t i = 0; i < n; ++i)
    if (in.dense_dx[i]) nn_direct[i] = direct_all[in.nn_position[i]];
  t.kernels[kRoutine] = {{kSwitch, best_switch}};
  apply_tuning(rt, t);
  t.kernels[kDense] = {{"TRANSPOSED_DX", use_transposed ? 1 : 0}};
  detail::apply_gemm_choice(rt, kDense, t.kernels[kDense]);
  // The convolutions' choice is not tuned but comes with the device's database entry: kept in the
  // tuning of its own, which replaces the entry at every later start.
  if (const auto entry = database_tuning(rt.info()); entry && entry->kernels.count(kConv)) {
    t.kernels[kConv] = entry->kernels.at(kConv);
    detail::apply_gemm_choice(rt, kConv, t.kernels[kConv]);
  }
  for (size_t i = 0; i < n; ++i) {
    const auto& s = o.shapes[i];
    say(fmt::format(
        "      {:<6} {}{} {:>5}x{:>5}x{:>5}: direct {:7.3f} ms, indirect {:7.3f} ms{}{}", s.label,
        s.trans_a ? 'T' : 'N', s.trans_b ? 'T' : 'N', s.m, s.n, s.k, direct[i] * 1e3, in.indirect[i] * 1e3,
        in.dense_dx[i] ? fmt::format("; transposed: Wᵀ {:.3f} ms + NN direct {:.3f} / indirect {:.3f} ms",
                                     in.transpose_w[i] * 1e3, nn_direct[i] * 1e3, in.nn_indirect[i] * 1e3)
                       : "",
        in.as_tn[i] ? " (indirect: anycl's transposes + TN, as trained)" : ""));
  }
  say(fmt::format("      switch {} = {}; dense dx as {}", kSwitch, best_switch,
                  use_transposed ? "transpose + GEMM NN" : "GEMM NT"));
  t.seconds_after = best_total;
  say(fmt::format(
      "      the model's {} GEMMs tuned: {:.3f} ms per pass as trained, {:.2f}x the parameters as they "
      "were",
      n, t.seconds_after * 1e3, t.seconds_before / t.seconds_after));
  finish_stage("switch", t0);
  return t;
}

}  // namespace anycl
