// measure_speed_shares: one positive share per replica summing to 1, roughly equal for two
// replicas on the same device (timing is never asserted tightly), and clear input errors.
#include <doctest/doctest.h>
#include <anycl/data/dataset.hpp>
#include <anycl/dist/speed_shares.hpp>
#include <anycl/error.hpp>

#include <numeric>

#include "helpers.hpp"

namespace {

anycl::ModelSpec small_model() {
  anycl::Sequential m(784);
  m.dense(32, anycl::Activation::relu).dropout(0.2f).dense(10);
  return m.spec();
}

const anycl::data::Dataset& samples() {
  static const anycl::data::Dataset data = [] {
    anycl::data::LoadOptions load;
    load.limit = 256;
    return anycl::data::load_folder(anycl::data::kFashionMnistDir, load).train;
  }();
  return data;
}

}  // namespace

TEST_CASE("speed shares of two replicas on one device are positive and roughly equal") {
  anycl::Runtime a, b;
  const anycl::SpeedShares s = anycl::measure_speed_shares({&a, &b}, small_model(), samples(), 64);
  REQUIRE(s.shares.size() == 2);
  REQUIRE(s.samples_per_second.size() == 2);
  CHECK(std::accumulate(s.shares.begin(), s.shares.end(), 0.0) == doctest::Approx(1.0).epsilon(1e-12));
  for (size_t k = 0; k < 2; ++k) {
    CAPTURE(k);
    CHECK(s.samples_per_second[k] > 0);
    CHECK(s.shares[k] ==
          doctest::Approx(s.samples_per_second[k] / (s.samples_per_second[0] + s.samples_per_second[1])));
    // The same device twice: equal up to timing noise (loose bounds, as other processes share the CPU).
    CHECK(s.shares[k] >= 0.2);
    CHECK(s.shares[k] <= 0.8);
  }
}

TEST_CASE("speed shares of one replica is one share of 1") {
  anycl::SpeedProbe quick;
  quick.warmup_steps = 1;
  quick.rounds = 1;
  quick.steps_per_round = 1;
  const anycl::SpeedShares s =
      anycl::measure_speed_shares({&anycl::test::runtime()}, small_model(), samples(), 300, nullptr, quick);
  REQUIRE(s.shares.size() == 1);
  CHECK(s.shares[0] == 1.0);
}

TEST_CASE("speed shares reject empty inputs with a clear message") {
  anycl::Runtime& rt = anycl::test::runtime();
  CHECK_THROWS_WITH_AS(anycl::measure_speed_shares({}, small_model(), samples(), 64),
                       doctest::Contains("at least one device"), anycl::ValidationError);
  CHECK_THROWS_WITH_AS(anycl::measure_speed_shares({&rt}, small_model(), samples(), 0),
                       doctest::Contains("batch"), anycl::ValidationError);
  CHECK_THROWS_WITH_AS(anycl::measure_speed_shares({&rt}, small_model(), anycl::data::Dataset{}, 64),
                       doctest::Contains("0 samples"), anycl::ValidationError);
  anycl::SpeedProbe none;
  none.rounds = 0;
  CHECK_THROWS_AS(anycl::measure_speed_shares({&rt}, small_model(), samples(), 64, nullptr, none),
                  anycl::ValidationError);
}
