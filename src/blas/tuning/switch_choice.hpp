// The tuner's last decisions as plain functions of measured times: CLBlast's direct/indirect switch
// and the dense layers' dx layout, and whether another direct set serves the switch better. No
// device here: tune_gemm measures, these choose (tests/test_switch_choice.cpp).
#pragma once

#include <cstddef>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "anycl/blas/tuning.hpp"

namespace anycl::detail {

/// The switch that sends every GEMM we meet to the direct kernel: its cube exceeds any m·n·k.
inline constexpr size_t kAlwaysDirect = size_t(1) << 20;

/// The smallest switch whose cube exceeds `mnk`: shapes with m·n·k below its cube go direct.
size_t cube_root_up(size_t mnk);

/// What the choice is made from, per shape i of `shapes` (the model's GEMMs, as tune_gemm gets
/// them): the indirect winner's seconds as training runs the shape on the indirect kernel, and for
/// a dense dx (an NT shape) the other layout's parts: W's transpose and the GEMM NN on the indirect
/// kernel; the direct times come separately (one vector per direct set), indexed as timed_shapes.
struct SwitchInputs {
  std::vector<GemmShape> shapes;
  std::vector<double> indirect;     // seconds per shape on the indirect kernel, as trained
  std::vector<bool> as_tn;          // the indirect kernel runs it as Dense's transposes + TN
  std::vector<bool> dense_dx;       // a dense dx: the transposed layout applies
  std::vector<size_t> nn_position;  // a dense dx's GEMM NN in timed_shapes (direct times' index)
  std::vector<double> nn_indirect;  // that GEMM NN on the indirect kernel
  std::vector<double> transpose_w;  // the transpose of W before it
};

/// A switch and dx layout with the seconds one pass over the shapes takes so (each shape times its
/// count).
struct SwitchChoice {
  double total = std::numeric_limits<double>::max();
  size_t sw = 1;
  bool transposed = false;
};

/// The switches worth trying: 1 (all indirect), kAlwaysDirect (all direct) and, per shape, the
/// smallest that sends it direct.
std::vector<size_t> switch_candidates(const std::vector<GemmShape>& shapes);

/// Seconds of one pass over the shapes as training runs them with switch `sw` and the dx layout
/// `transposed`, the direct set's seconds per timed shape being `direct` (each shape times its count).
double pass_seconds(const SwitchInputs& in, const std::vector<double>& direct, size_t sw, bool transposed);

/// The fastest switch and dx layout with a direct set whose seconds per timed shape are `direct`.
/// Ties keep the earlier: GEMM NT before the transposed layout, then switch_candidates' order.
SwitchChoice choose_switch(const SwitchInputs& in, const std::vector<double>& direct);

/// Among the direct stage's timed sets, the one whose best choice beats `current` by the most
/// (a set tuned for every shape may lose, on the shapes the switch leaves direct, to one that
/// serves those better); -1 when none does. The stage's winner (`winner`) and sets timed at a
/// different number of shapes than `timed_count` are skipped; ties keep the earlier set.
long better_direct_set(const SwitchInputs& in,
                       const std::vector<std::pair<std::map<std::string, size_t>, std::vector<double>>>& sets,
                       const std::map<std::string, size_t>& winner, size_t timed_count,
                       const SwitchChoice& current);

/// The choice with a direct set better_direct_set proposed, once `checked` (that set checked for
/// exact results and timed again, as every candidate is) confirms it: exact, timed at every one of
/// `timed_count` shapes and faster than `current`; nothing otherwise.
std::optional<SwitchChoice> accept_direct_set(const SwitchInputs& in, const CandidateResult& checked,
                                              size_t timed_count, const SwitchChoice& current);

}  // namespace anycl::detail
