// `anycl bench gemm`'s measured peak (tools/anycl/bench_peak.hpp): the multiply-add chains' results
// against the host's at every vector width, then the measurement's own account of itself. No speed
// is asserted: the figure only has to exist and name the width it came from.
#include <doctest/doctest.h>
#include <anycl/error.hpp>

#include <algorithm>
#include <cmath>
#include <string>

#include "bench_peak.hpp"
#include "helpers.hpp"

TEST_CASE("the peak kernel's multiply-add chains match the host's at every vector width") {
  auto& rt = anycl::test::runtime();
  for (const size_t width : {1, 2, 4, 8, 16}) {
    CAPTURE(width);
    CHECK_NOTHROW(anycl::cli::check_peak_chains(rt, width, 64));
    CHECK_NOTHROW(anycl::cli::check_peak_chains(rt, width, 128));
  }
  CHECK_THROWS_AS(anycl::cli::check_peak_chains(rt, 3, 64), anycl::Error);
  // 97 work-items (a prime) are no whole number of work-groups: refused with the reason, not launched short
  CHECK_THROWS_AS(anycl::cli::check_peak_chains(rt, 4, 97), anycl::Error);
}

TEST_CASE("the measured peak names its best width and every width's figure") {
  auto& rt = anycl::test::runtime();
  const anycl::cli::MeasuredPeak peak = anycl::cli::measure_peak(rt, 1);
  CHECK(std::isfinite(peak.gflops));
  CHECK(peak.gflops > 0);
  const size_t widths[] = {1, 2, 4, 8, 16};
  CHECK(std::find(std::begin(widths), std::end(widths), peak.vector_width) != std::end(widths));
  CHECK(std::count(peak.widths.begin(), peak.widths.end(), ':') == 5);
  CHECK(peak.work_items > 0);
  CHECK(peak.iterations >= 1024);
}
