// The tuner's decisions without a device: CLBlast's direct/indirect switch and the dense dx layout
// chosen from hand-made times (src/blas/tuning/switch_choice.hpp), the tie rules, the transposed dx,
// and a direct set that serves the switch better than the stage's winner.
#include <doctest/doctest.h>

#include "blas/tuning/switch_choice.hpp"

namespace {

using anycl::GemmShape;
using anycl::detail::SwitchInputs;

// Shapes as model_gemm_shapes gives them: a small forward (81,920 multiply-adds), a large weight
// gradient (12.8 M) and, optionally, a dense dx (NT, 12.8 M).
SwitchInputs inputs(bool with_dx) {
  SwitchInputs in;
  in.shapes = {{"fwd 1", false, false, 128, 10, 64, 1, true}, {"dW 1", true, false, 784, 128, 128, 1, false}};
  in.indirect = {3.0, 2.0};
  if (with_dx) {
    in.shapes.push_back({"dX 2", false, true, 128, 784, 128, 1, true});
    in.indirect.push_back(6.0);
  }
  const size_t n = in.shapes.size();
  in.as_tn.assign(n, false), in.dense_dx.assign(n, false), in.nn_position.assign(n, 0);
  in.nn_indirect.assign(n, 0), in.transpose_w.assign(n, 0);
  if (with_dx) in.dense_dx[2] = true, in.nn_position[2] = 3, in.nn_indirect[2] = 5.0, in.transpose_w[2] = 0.5;
  return in;
}

}  // namespace

TEST_CASE("switch choice: the cube roots bound the shapes") {
  CHECK(anycl::detail::cube_root_up(0) == 1);
  CHECK(anycl::detail::cube_root_up(81920) == 44);  // 43³ = 79,507 ≤ 81,920 < 44³ = 85,184
  CHECK(anycl::detail::cube_root_up(64) == 5);      // 4³ = 64 is not below 4³: the shape goes direct from 5
  const auto c = anycl::detail::switch_candidates(inputs(false).shapes);
  REQUIRE(c.size() == 4);
  CHECK(c[0] == 1);
  CHECK(c[1] == anycl::detail::kAlwaysDirect);
  CHECK(c[2] == 44);
  CHECK(c[3] == 235);
}

TEST_CASE("switch choice: small shapes direct, large ones indirect") {
  SwitchInputs in = inputs(false);
  // direct: the small forward 1.0 (indirect 3.0), the large dW 5.0 (indirect 2.0)
  auto c = anycl::detail::choose_switch(in, {1.0, 5.0});
  CHECK(c.sw == 44);
  CHECK(c.total == doctest::Approx(3.0));
  CHECK_FALSE(c.transposed);  // no dense dx: both layouts cost the same, and the tie keeps GEMM NT
  in.shapes[1].count = 2;     // a weight gradient split in two slices runs twice a step
  c = anycl::detail::choose_switch(in, {1.0, 5.0});
  CHECK(c.sw == 44);
  CHECK(c.total == doctest::Approx(5.0));
  // Everything faster direct: a switch above every shape; the first such candidate is kAlwaysDirect.
  c = anycl::detail::choose_switch(in, {1.0, 1.0});
  CHECK(c.sw == anycl::detail::kAlwaysDirect);
  CHECK(c.total == doctest::Approx(3.0));
}

TEST_CASE("switch choice: ties keep the earlier candidate") {
  SwitchInputs in = inputs(false);
  in.indirect = {1.0, 1.0};
  const auto c = anycl::detail::choose_switch(in, {1.0, 1.0});
  CHECK(c.sw == 1);  // all indirect, the first candidate
  CHECK_FALSE(c.transposed);
  CHECK(c.total == doctest::Approx(2.0));
}

TEST_CASE("switch choice: the transposed dx layout where it is faster") {
  SwitchInputs in = inputs(true);
  // direct per timed shape: fwd, dW, dX as GEMM NT, then dX's GEMM NN
  auto c = anycl::detail::choose_switch(in, {1.0, 9.0, 4.0, 1.0});
  // sw 44: fwd direct (1), dW indirect (2), dX indirect: NT 6 or Wᵀ 0.5 + NN 5 = 5.5; 235 sends dW and
  // dX direct: 1 + 9 + min(4, 0.5 + 1) = 11.5; so 44 with the transposed dx, 8.5
  CHECK(c.sw == 44);
  CHECK(c.transposed);
  CHECK(c.total == doctest::Approx(8.5));
  // The indirect kernel reads A transposed: Dense runs dx as its transposes + TN there, whatever the
  // layout, so the transposed layout only matters for a dx left direct.
  in.as_tn[2] = true;
  c = anycl::detail::choose_switch(in, {1.0, 9.0, 4.0, 1.0});
  CHECK(c.sw == 44);
  CHECK_FALSE(c.transposed);  // same total both ways: the tie keeps GEMM NT
  CHECK(c.total == doctest::Approx(9.0));
  // A slow transpose: GEMM NT wins.
  in = inputs(true);
  in.transpose_w[2] = 3.0;
  c = anycl::detail::choose_switch(in, {1.0, 9.0, 4.0, 1.0});
  CHECK_FALSE(c.transposed);
  CHECK(c.total == doctest::Approx(9.0));
}

TEST_CASE("switch choice: a direct set that serves the switch better") {
  const SwitchInputs in = inputs(false);
  const std::map<std::string, size_t> winner = {{"WGD", 32}}, small = {{"WGD", 8}}, other = {{"WGD", 16}};
  const auto current = anycl::detail::choose_switch(in, {1.0, 4.0});  // sw 44, 3.0
  // The winner is the fastest over both shapes (5.0 against 5.5), but `small` serves the forward
  // (0.5), the only shape the switch leaves direct: 2.5 against 3.0.
  std::vector<std::pair<std::map<std::string, size_t>, std::vector<double>>> sets = {
      {winner, {1.0, 4.0}}, {other, {0.9, 4.0}}, {small, {0.5, 5.0}}};
  CHECK(anycl::detail::better_direct_set(in, sets, winner, 2, current) == 2);
  // The winner itself is never taken again, however fast it is listed.
  sets[0].second = {0.1, 0.1};
  CHECK(anycl::detail::better_direct_set(in, sets, winner, 2, current) == 2);
  // A set timed at other shapes is skipped; a tie with the best keeps the earlier set.
  sets = {{small, {0.5}}, {other, {0.5, 9.0}}, {small, {0.5, 9.0}}};
  CHECK(anycl::detail::better_direct_set(in, sets, winner, 2, current) == 1);
  // None faster: -1.
  sets = {{other, {1.0, 4.0}}};
  CHECK(anycl::detail::better_direct_set(in, sets, winner, 2, current) == -1);
}

TEST_CASE("switch choice: a proposed direct set is taken only when its check confirms it") {
  const SwitchInputs in = inputs(false);
  const auto current = anycl::detail::choose_switch(in, {1.0, 4.0});  // sw 44, 3.0
  anycl::CandidateResult checked;
  checked.exact = true;
  checked.shape_seconds = {0.5, 5.0};  // the forward faster direct: 0.5 + 2.0
  auto c = anycl::detail::accept_direct_set(in, checked, 2, current);
  REQUIRE(c);
  CHECK(c->total == doctest::Approx(2.5));
  CHECK(c->sw == 44);
  // Timed again, it is no faster than the current choice: kept as it was (a tie too).
  checked.shape_seconds = {1.0, 5.0};
  CHECK_FALSE(anycl::detail::accept_direct_set(in, checked, 2, current));
  // Not exact, or timed at fewer shapes (its child process failed part-way): refused.
  checked.shape_seconds = {0.5, 5.0};
  checked.exact = false;
  CHECK_FALSE(anycl::detail::accept_direct_set(in, checked, 2, current));
  checked.exact = true;
  checked.shape_seconds = {0.5};
  CHECK_FALSE(anycl::detail::accept_direct_set(in, checked, 2, current));
}

TEST_CASE("switch choice: a pass's seconds at a given switch and layout, as the tuned result is costed") {
  SwitchInputs in = inputs(true);
  const std::vector<double> direct = {1.0, 9.0, 4.0, 1.0};
  // The parameters as they were, all indirect (switch 1): 3 + 2 + 6 (dX as GEMM NT) = 11, or with the
  // transposed layout 3 + 2 + 0.5 + 5 = 10.5.
  CHECK(anycl::detail::pass_seconds(in, direct, 1, false) == doctest::Approx(11.0));
  CHECK(anycl::detail::pass_seconds(in, direct, 1, true) == doctest::Approx(10.5));
  // All direct: 1 + 9 + 4, or 1 + 9 + 0.5 + 1.
  CHECK(anycl::detail::pass_seconds(in, direct, anycl::detail::kAlwaysDirect, false) ==
        doctest::Approx(14.0));
  CHECK(anycl::detail::pass_seconds(in, direct, anycl::detail::kAlwaysDirect, true) == doctest::Approx(11.5));
  // choose_switch takes the least of them.
  const auto c = anycl::detail::choose_switch(in, direct);
  CHECK(c.total == doctest::Approx(anycl::detail::pass_seconds(in, direct, c.sw, c.transposed)));
  in.shapes[1].count = 3;  // a dW of three slices counts three times
  CHECK(anycl::detail::pass_seconds(in, direct, 1, false) == doctest::Approx(15.0));
}
