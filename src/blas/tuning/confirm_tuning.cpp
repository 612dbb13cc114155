// A tune's confirmation (confirm_tuning.hpp): the current and the tuned set timed in turn.
#include "blas/tuning/confirm_tuning.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <utility>

#include "blas/gemm_plan.hpp"
#include "blas/tuning/gemm_timing.hpp"

namespace anycl::detail {

GemmTuning whole_tuning(const GemmTuning& t) {
  GemmTuning w = t;
  w.kernels.emplace(kDenseChoices, std::map<std::string, size_t>{{"TRANSPOSED_DX", 0}});
  w.kernels.emplace(kConvChoices, std::map<std::string, size_t>{{"BATCHED_DW", 1},
                                                                {"DW_SLICES", GemmState::kDefaultDwSlices}});
  w.kernels.emplace(kConvDwXgemm, std::map<std::string, size_t>{});        // none: dW on the model's set
  w.kernels.emplace(kDenseXgemm, std::map<std::string, size_t>{});         // none: Dense on the model's set
  w.kernels.emplace(kConvWinogradXgemm, std::map<std::string, size_t>{});  // none: the model's set
  return w;
}

bool same_sets(Runtime& rt, const GemmTuning& a, const GemmTuning& b) {
  const GemmTuning wa = whole_tuning(a), wb = whole_tuning(b);
  auto clblast_sets = [](const GemmTuning& t) {
    auto sets = t.kernels;
    for (const char* line : kGemmChoices) sets.erase(line);
    return sets;
  };
  if (clblast_sets(wa) != clblast_sets(wb)) return false;
  apply_tuning(rt, wa);
  for (const char* line : kGemmChoices)
    if (!holds_gemm_choice(rt, line, wb.kernels.at(line))) return false;
  return true;
}

Confirmation confirm_tuning(Runtime& rt, const GemmTuning& current, const GemmTuning& tuned,
                            const std::vector<GemmShape>& shapes, int rounds,
                            const std::function<void(const std::string&)>& say) {
  if (same_sets(rt, current, tuned)) {
    apply_tuning(rt, whole_tuning(tuned));
    Confirmation c;
    c.same_sets = true;
    return c;
  }
  ShapeBuffers buffers(rt, shapes);
  std::vector<double> a, b;
  for (int r = 0; r < std::max(1, rounds); ++r) {
    apply_tuning(rt, whole_tuning(current));
    a.push_back(pass_seconds_as_trained(rt, shapes, buffers));
    apply_tuning(rt, whole_tuning(tuned));
    b.push_back(pass_seconds_as_trained(rt, shapes, buffers));
    if (say)
      say(fmt::format("      round {}/{}: {:.3f} ms per pass as they were, {:.3f} ms tuned", r + 1,
                      std::max(1, rounds), a.back() * 1e3, b.back() * 1e3));
  }
  return confirmation_verdict(std::move(a), std::move(b));
}

}  // namespace anycl::detail
