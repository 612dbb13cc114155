// A tune's confirmation (full or quick) on the device (src/blas/tuning/confirm_tuning.hpp): the current and
// the tuned set applied in turn, each timed as trained after a warm-up. No timing decides a pass: the tests
// check what was applied and timed, not which set won (test_tuning_margin.cpp checks the verdict on given
// times).
#include <doctest/doctest.h>
#include <anycl/blas/tuning.hpp>

#include <map>
#include <string>
#include <vector>

#include "blas/clblast_params.hpp"
#include "blas/gemm_plan.hpp"
#include "blas/tuning/confirm_tuning.hpp"
#include "blas/tuning/switch_choice.hpp"
#include "helpers.hpp"

namespace {

// What the runtime applies now, as a complete tuning (the three CLBlast kernels and the choices).
anycl::GemmTuning applied(anycl::Runtime& rt) {
  anycl::GemmTuning t;
  for (const char* kernel : {"XgemmDirect", "Xgemm", "GemmRoutine"})
    REQUIRE(anycl::detail::clblast_params::retrieve(rt.info().id, kernel, t.kernels[kernel]) ==
            clblast::StatusCode::kSuccess);
  const anycl::detail::GemmState& s = anycl::detail::gemm_state(rt);
  t.kernels[anycl::detail::kDenseChoices] = {{"TRANSPOSED_DX", s.transposed_dx}};
  t.kernels[anycl::detail::kConvChoices] = {{"BATCHED_DW", s.batched_dw}, {"DW_SLICES", s.dw_slices}};
  return t;
}

// Puts back what the runtime applied when it was made, however the test ends.
struct Restore {
  anycl::Runtime& rt;
  anycl::GemmTuning before = applied(rt);
  ~Restore() { anycl::apply_tuning(rt, before); }
};

size_t routine_switch(anycl::Runtime& rt) {
  return applied(rt).kernels.at("GemmRoutine").at("XGEMM_MIN_INDIRECT_SIZE");
}

// Small shapes (a Dense product, a dense dx, a dW twice a step), as the tuning tests use.
const std::vector<anycl::GemmShape> kShapes = {{"fwd 1", false, false, 32, 48, 40, 1, true},
                                               {"dX 1", false, true, 32, 40, 48, 1, true},
                                               {"dW 1", true, false, 40, 48, 32, 2}};

}  // namespace

TEST_CASE("a tune's confirmation - identical sets are not timed and do not replace the entry") {
  auto& rt = anycl::test::runtime();
  const Restore restore{rt};
  anycl::GemmTuning now = restore.before;
  now.kernels[anycl::detail::kDenseChoices] = {{"TRANSPOSED_DX", 0}};
  now.kernels[anycl::detail::kConvChoices] = {{"BATCHED_DW", 1}, {"DW_SLICES", 16}};  // the defaults
  anycl::GemmTuning same = now;
  same.kernels.erase(anycl::detail::kDenseChoices);  // a missing choice line is its default
  same.kernels.erase(anycl::detail::kConvChoices);
  same.seconds_after = 1e-9;  // what the search modelled does not count: the sets do
  std::vector<std::string> lines;
  const auto c = anycl::detail::confirm_tuning(rt, now, same, kShapes, 3,
                                               [&](const std::string& l) { lines.push_back(l); });
  CHECK(c.same_sets);
  CHECK_FALSE(c.confirmed);
  CHECK(c.current.empty());
  CHECK(c.tuned.empty());
  CHECK(lines.empty());
  CHECK(anycl::detail::same_sets(rt, now, same));
  anycl::GemmTuning transposed = now;
  transposed.kernels[anycl::detail::kDenseChoices] = {{"TRANSPOSED_DX", 1}};
  CHECK_FALSE(anycl::detail::same_sets(rt, now, transposed));
  anycl::GemmTuning other_kernel = now;
  other_kernel.kernels["GemmRoutine"]["XGEMM_MIN_INDIRECT_SIZE"] += 1;
  CHECK_FALSE(anycl::detail::same_sets(rt, now, other_kernel));
}

TEST_CASE(
    "a tune's confirmation - the two sets are timed in turn, three rounds each, the tuned one left "
    "applied") {
  auto& rt = anycl::test::runtime();
  const Restore restore{rt};
  const anycl::GemmTuning now = restore.before;
  // The tuned set: the same kernels' sets behind another switch (every shape here on the other kernel).
  anycl::GemmTuning tuned = now;
  const size_t was = routine_switch(rt);
  const size_t other = was == 1 ? anycl::detail::kAlwaysDirect : 1;
  tuned.kernels["GemmRoutine"]["XGEMM_MIN_INDIRECT_SIZE"] = other;
  std::vector<std::string> lines;
  const auto c = anycl::detail::confirm_tuning(rt, now, tuned, kShapes, 3,
                                               [&](const std::string& l) { lines.push_back(l); });
  CHECK_FALSE(c.same_sets);
  REQUIRE(c.current.size() == 3);
  REQUIRE(c.tuned.size() == 3);
  CHECK(lines.size() == 3);  // a line a round, with both times
  for (size_t i = 0; i < 3; ++i) {
    CHECK(c.current[i] > 0);
    CHECK(c.tuned[i] > 0);
  }
  CHECK(c.current_median > 0);
  CHECK(c.tuned_median > 0);
  CHECK(c.confirmed == anycl::detail::confirmation_verdict(c.current, c.tuned).confirmed);
  CHECK(routine_switch(rt) == other);  // ABAB…: it ends on the tuned set
  anycl::apply_tuning(rt, anycl::detail::whole_tuning(now));
  CHECK(routine_switch(rt) == was);
}
