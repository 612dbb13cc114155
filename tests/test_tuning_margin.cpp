// When a tuning replaces what a device runs, without a device (src/blas/tuning/tuning_margin.hpp):
// the 5 % margin, and the quick search's early stop after the first part of its shortlist.
#include <doctest/doctest.h>

#include <limits>

#include "blas/tuning/tuning_margin.hpp"

using anycl::detail::beats_by_margin;
using anycl::detail::shortlist_pays;
using anycl::detail::shortlist_probe;

TEST_CASE("tuning margin: a result replaces the current parameters only when 5 % faster") {
  CHECK(beats_by_margin(9.5, 10.0));  // 9.5 × 1.05 = 9.975 ≤ 10
  CHECK_FALSE(beats_by_margin(9.6, 10.0));
  CHECK_FALSE(beats_by_margin(10.0, 10.0));
  CHECK_FALSE(beats_by_margin(11.0, 10.0));  // slower: the entry stays (a full tune too)
  CHECK_FALSE(beats_by_margin(0.0, 10.0));   // no time is no measurement
  CHECK(beats_by_margin(8.6e-3, 43.1e-3));
}

TEST_CASE("tuning margin: a quick search probes a third of its shortlist, at least three sets") {
  CHECK(shortlist_probe(0) == 0);
  CHECK(shortlist_probe(2) == 2);  // shorter than the probe: all of it
  CHECK(shortlist_probe(3) == 3);
  CHECK(shortlist_probe(7) == 3);
  CHECK(shortlist_probe(9) == 3);
  CHECK(shortlist_probe(10) == 4);
  CHECK(shortlist_probe(14) == 5);
}

TEST_CASE("tuning margin: the rest of the shortlist runs only when the probe found a clear gain") {
  CHECK(shortlist_pays(10.0, 9.0));         // the probe beat the current set by 11 %: go on
  CHECK_FALSE(shortlist_pays(10.0, 9.8));   // 2 %: noise, stop
  CHECK_FALSE(shortlist_pays(10.0, 10.0));  // the current set is the best so far
  CHECK(shortlist_pays(0.0, 9.8));          // the current set did not run: nothing to compare with
  CHECK_FALSE(shortlist_pays(10.0, std::numeric_limits<double>::infinity()));  // no exact set: stop
}

TEST_CASE("a tune's confirmation - the tuned set replaces the current one only when its median wins by 5 %") {
  using anycl::detail::confirmation_verdict;
  CHECK(anycl::detail::median({}) == 0.0);
  CHECK(anycl::detail::median({3.0, 1.0, 2.0}) == 2.0);
  CHECK(anycl::detail::median({4.0, 1.0, 3.0, 2.0}) == 2.5);
  // The medians, not a round's best or the first round: one lucky round does not confirm.
  auto c = confirmation_verdict({10.0, 10.2, 9.9}, {9.0, 10.1, 10.0});
  CHECK(c.current_median == 10.0);
  CHECK(c.tuned_median == 10.0);
  CHECK_FALSE(c.confirmed);
  CHECK(c.current.size() == 3);
  c = confirmation_verdict({10.0, 12.0, 11.0}, {10.4, 9.0, 11.5});  // 10.4 × 1.05 = 10.92 ≤ 11
  CHECK(c.confirmed);
  // The drift this guards against: a baseline timed at 167 ms, a tuned set modelled at 240 against 291,
  // and in turn the entry 170 to 180 ms, the tuned set 330 to 350.
  c = confirmation_verdict({0.170, 0.180, 0.175}, {0.340, 0.330, 0.350});
  CHECK_FALSE(c.confirmed);
  CHECK_FALSE(confirmation_verdict({}, {}).confirmed);  // nothing timed: nothing confirmed
  CHECK_FALSE(confirmation_verdict({0, 0, 0}, {0, 0, 0}).confirmed);
}
