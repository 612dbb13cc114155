// Counter-based weight initialisation against tests/reference/init.hpp: bit-identical values,
// Keras' Glorot/He limits, values within ±limit with mean ≈ 0, a new stream per layer.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <anycl/error.hpp>

#include <cmath>

#include "helpers.hpp"
#include "ops/init.hpp"
#include "reference/init.hpp"

using anycl::Init;

namespace {

std::vector<float> device_init(size_t n, float limit, uint64_t seed, uint32_t stream) {
  auto& rt = anycl::test::runtime();
  anycl::Tensor w(rt, {n});
  w.fill(std::nanf(""));
  anycl::uniform_init(rt, w, limit, seed, stream);
  return w.download();
}

}  // namespace

TEST_CASE("uniform_init is bit-identical to the reference at offsets with padding untouched") {
  auto& rt = anycl::test::runtime();
  uint32_t stream = 0;
  for (size_t n : {1u, 7u, 31u, 65u, 1025u, 784u * 128u})
    for (uint64_t seed : {uint64_t(0), uint64_t(42), uint64_t(0xfeedface12345678ull)}) {
      const float limit = 0.25f + 0.01f * float(stream);
      const size_t off = 5;
      anycl::Tensor all(rt, {off + n + 4});
      all.fill(std::nanf(""));
      anycl::Tensor w = all.rows(off, n);
      anycl::uniform_init(rt, w, limit, seed, stream);
      std::vector<float> ref(n);
      anycl::reference::uniform_init(ref.data(), n, limit, seed, stream);
      const auto got = all.download();
      const std::string what = fmt::format("init n {} seed {:#x} stream {}", n, seed, stream);
      anycl::test::check_close(std::vector<float>(got.begin() + long(off), got.begin() + long(off + n)), ref,
                               0, 0, what);
      size_t pad_written = 0;
      for (size_t i = 0; i < got.size(); ++i)
        if (i < off || i >= off + n) pad_written += !std::isnan(got[i]);
      CHECK_MESSAGE(pad_written == 0, what, " wrote outside its view");
      ++stream;
    }
}

TEST_CASE("init limits are Keras' Glorot and He uniform limits") {
  CHECK(anycl::init_limit(Init::glorot_uniform, 784, 128) == float(std::sqrt(6.0 / 912.0)));
  CHECK(anycl::init_limit(Init::he_uniform, 784, 128) == float(std::sqrt(6.0 / 784.0)));
  for (auto [in, out] : {std::pair<size_t, size_t>{1, 1}, {7, 31}, {1025, 65}})
    for (Init init : {Init::glorot_uniform, Init::he_uniform})
      CHECK(anycl::init_limit(init, in, out) == anycl::reference::init_limit(init, in, out));
  CHECK(anycl::parse_init("glorot_uniform") == Init::glorot_uniform);
  CHECK(anycl::parse_init("he") == Init::he_uniform);
  CHECK_THROWS_WITH_AS(anycl::parse_init("normal"), doctest::Contains("glorot_uniform or he_uniform"),
                       anycl::ValidationError);
}

TEST_CASE("initial weights lie within the limit with mean near 0 and variance near limit squared over 3") {
  const size_t n = 300000;  // σ of the mean ≈ 0.001·limit
  const float limit = anycl::init_limit(Init::glorot_uniform, 784, 512);
  const auto w = device_init(n, limit, 7, 3);
  double sum = 0, sum_sq = 0;
  size_t outside = 0;
  for (float v : w) {
    outside += !(v >= -limit && v <= limit);
    sum += v, sum_sq += double(v) * v;
  }
  CHECK(outside == 0);
  const double mean = sum / double(n), var = sum_sq / double(n) - mean * mean;
  CHECK(std::abs(mean) < 0.01 * limit);
  CHECK(var == doctest::Approx(double(limit) * limit / 3).epsilon(0.02));
}

TEST_CASE("another seed or stream gives other weights and the same gives the same") {
  const size_t n = 1000;
  const auto a = device_init(n, 1.f, 5, 0);
  CHECK(a == device_init(n, 1.f, 5, 0));
  for (const auto& other :
       {device_init(n, 1.f, 5, 1), device_init(n, 1.f, 6, 0), device_init(n, 1.f, 5 + (1ull << 32), 0)}) {
    size_t same = 0;
    for (size_t i = 0; i < n; ++i) same += a[i] == other[i];
    CHECK(same < n / 100);
  }
}

TEST_CASE("fill_value sets exactly a view's elements at awkward sizes and offsets") {
  auto& rt = anycl::test::runtime();
  for (size_t n : {size_t(1), size_t(63), size_t(64), size_t(65), size_t(1000)})
    for (size_t offset : {size_t(0), size_t(3)}) {
      std::vector<float> expected(n + offset + 5, -1.f);
      auto all = anycl::Tensor::from_host(rt, {expected.size()}, expected);
      all.rows(offset, n).fill(0.25f);
      std::fill(expected.begin() + long(offset), expected.begin() + long(offset + n), 0.25f);
      CHECK_MESSAGE(all.download() == expected, fmt::format("n {} offset {}", n, offset));
    }
}
