// The exact checks of a tuning run the Xgemm sets it names for some products (its anyclConvDwXgemm,
// anyclDenseXgemm and anyclConvWinogradXgemm lines: the convolutions' weight gradients, Dense's
// forward products, Winograd's per-plane products) as well as its Xgemm set: a set those products
// train with is checked before it trains, by `anycl doctor` and `tune --check` (tuning_mismatch) and
// at start-up (apply_checked_tuning), and CLBlast's parameters are the tuning's again after.
#include <clblast.h>
#include <doctest/doctest.h>
#include <anycl/blas/tuning.hpp>

#include <map>
#include <string>

#include "blas/clblast_params.hpp"
#include "blas/gemm_plan.hpp"
#include "blas/tuning/tuning_check.hpp"
#include "gemm_exact.hpp"
#include "helpers.hpp"

namespace {

using Set = std::map<std::string, size_t>;

Set current(const std::string& kernel) {
  Set params;
  REQUIRE(anycl::detail::clblast_params::retrieve(anycl::test::runtime().info().id, kernel, params) ==
          clblast::StatusCode::kSuccess);
  return params;
}

// A shipped Xgemm set (the PoCL entries' large one, tests/tuning_database/small-sets.txt's candidate).
const Set kOtherSet = {{"GEMMK", 0}, {"KREG", 1},   {"KWG", 16},  {"KWI", 2},  {"MDIMA", 16}, {"MDIMC", 8},
                       {"MWG", 128}, {"NDIMB", 16}, {"NDIMC", 8}, {"NWG", 64}, {"SA", 0},     {"SB", 0},
                       {"STRM", 1},  {"STRN", 1},   {"VWM", 8},   {"VWN", 4}};

// GEMMK=1 with MWG ≠ NWG: a set CLBlast computes wrongly, which its constraints refuse unseen.
const Set kBrokenSet = {{"GEMMK", 1}, {"KREG", 8},  {"KWG", 1},   {"KWI", 1},  {"MDIMA", 16}, {"MDIMC", 16},
                        {"MWG", 128}, {"NDIMB", 2}, {"NDIMC", 2}, {"NWG", 16}, {"SA", 0},     {"SB", 0},
                        {"STRM", 0},  {"STRN", 0},  {"VWM", 8},   {"VWN", 8}};

}  // namespace

TEST_CASE("a tuning's sets for some products are listed by line, each that differs from its Xgemm set") {
  anycl::GemmTuning t;
  t.kernels["Xgemm"] = kOtherSet;
  t.kernels[anycl::detail::kConvDwXgemm] = kBrokenSet;
  t.kernels[anycl::detail::kDenseXgemm] = kOtherSet;  // the Xgemm set itself: checked as that
  t.kernels[anycl::detail::kConvWinogradXgemm] = {};  // none: the products run on the Xgemm set
  const auto sets = anycl::detail::product_xgemm_sets(t);
  REQUIRE(sets.size() == 1);
  CHECK(sets[0].first == anycl::detail::kConvDwXgemm);
  CHECK(sets[0].second == kBrokenSet);
}

TEST_CASE("tuning_mismatch checks a tuning's sets for some products and names the line of a wrong one") {
  auto& rt = anycl::test::runtime();
  const Set xgemm = current("Xgemm");
  anycl::GemmTuning t;
  t.kernels["Xgemm"] = xgemm;
  t.kernels[anycl::detail::kConvWinogradXgemm] = kBrokenSet;
  const std::string wrong = anycl::tuning_mismatch(rt, t, {});
  CHECK_MESSAGE(wrong.find("anyclConvWinogradXgemm, the Xgemm set of some products") != std::string::npos,
                wrong);
  CHECK_MESSAGE(wrong.find("MWG=128 ≠ NWG=16") != std::string::npos, wrong);
  CHECK(current("Xgemm") == xgemm);  // left as it was
}

TEST_CASE(
    "the start-up check runs a tuning's sets for some products, then CLBlast holds the tuning's Xgemm") {
  auto& rt = anycl::test::runtime();
  const Set xgemm = current("Xgemm"), routine = current("GemmRoutine");
  const Set dw_before = anycl::detail::gemm_state(rt).dw_xgemm;
  anycl::GemmTuning t;
  t.kernels["Xgemm"] = xgemm;
  // A switch of 64: the odd sizes 67 × 65 × 69 run on the indirect kernel, as a set's products do.
  t.kernels["GemmRoutine"] = {{"XGEMM_MIN_INDIRECT_SIZE", 64}};
  t.kernels[anycl::detail::kConvDwXgemm] = kOtherSet;
  REQUIRE(anycl::detail::odd_shapes_over(64).size() == 4);
  anycl::detail::apply_checked_tuning(rt, t, nullptr);  // throws ValidationError where a set is wrong
  CHECK(current("Xgemm") == xgemm);
  CHECK(anycl::detail::gemm_state(rt).dw_xgemm == kOtherSet);
  {
    const anycl::detail::ConvDwGemmScope scope(rt);  // as a convolution's weight gradient runs
    CHECK(current("Xgemm") == kOtherSet);
    anycl::test::check_gemm_exact(rt, 129, 67, 131);
  }
  CHECK(current("Xgemm") == xgemm);

  anycl::GemmTuning restore;
  restore.kernels["GemmRoutine"] = routine;
  anycl::apply_tuning(rt, restore);
  anycl::detail::apply_gemm_choice(rt, anycl::detail::kConvDwXgemm, dw_before);
}
