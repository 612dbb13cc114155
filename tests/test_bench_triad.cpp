// `anycl bench bandwidth`'s triad kernel and the device's copy (tools/anycl/bench_bandwidth.hpp): every
// element against the host's arithmetic, on a count that is no whole number of work-groups (the kernel's
// bound), and the refusals. No speed is asserted.
#include <doctest/doctest.h>
#include <anycl/error.hpp>

#include "bench_bandwidth.hpp"
#include "helpers.hpp"

TEST_CASE("the bandwidth benchmark's triad and copy match the host's element by element") {
  auto& rt = anycl::test::runtime();
  for (const size_t n : {1, 255, 1037, 4096}) {
    CAPTURE(n);
    CHECK_NOTHROW(anycl::cli::check_triad(rt, n));
  }
  CHECK_THROWS_AS(anycl::cli::check_triad(rt, 0), anycl::Error);
}
