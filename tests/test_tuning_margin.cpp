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
