// Device batch gather against tests/reference/gather.hpp: rows through a permutation, features as
// bytes exactly v/255 (as the host Dataset gives them) or floats as given, targets as int class
// indices (from bytes or int32) or float rows, outputs at offsets with the padding left poisoned;
// widths below, at and past the kernel's 16 columns per work-item.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <anycl/error.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <random>
#include <tuple>
#include <type_traits>

#include "helpers.hpp"
#include "ops/gather.hpp"
#include "reference/gather.hpp"

namespace compute = anycl::compute;
using anycl::DType;

namespace {

using anycl::test::device_copy;

std::vector<uint8_t> random_bytes(size_t n, int hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(0, hi);
  std::vector<uint8_t> v(n);
  for (auto& x : v) x = uint8_t(dist(rng));
  return v;
}

template <typename T>
DType dtype_of() {
  return std::is_same_v<T, float> ? DType::f32 : std::is_same_v<T, uint8_t> ? DType::u8 : DType::i32;
}

template <typename TOut>
struct Gathered {
  std::vector<float> x_all;  // the whole x buffer, view at kXOffRows rows
  std::vector<TOut> t_all;   // the whole target buffer, view at kTOff elements
};
constexpr size_t kXOffRows = 2, kTOff = 3;

template <typename TOut>
TOut poison() {
  return std::is_same_v<TOut, float> ? TOut(std::nanf("")) : TOut(-1);
}

// Runs the gather for any stored types; TOut is int for class indices, float for float targets.
template <typename X, typename T, typename TOut = std::conditional_t<std::is_same_v<T, float>, float, int>>
Gathered<TOut> run_device(const std::vector<X>& features_in, const std::vector<T>& targets_in,
                          const std::vector<uint32_t>& order, size_t first, size_t rows, size_t features,
                          size_t width = 1) {
  auto& rt = anycl::test::runtime();
  anycl::GatherBatch op(rt);
  const auto xs = device_copy(rt, features_in), ts = device_copy(rt, targets_in),
             ord = device_copy(rt, order);
  anycl::Tensor x_all(rt, {rows + kXOffRows + 1, features});
  x_all.fill(std::nanf(""));
  anycl::Tensor x = x_all.rows(kXOffRows, rows);
  auto t = device_copy(rt, std::vector<TOut>(rows * width + kTOff + 2, poison<TOut>()));
  op.run({&xs, dtype_of<X>(), &ts, dtype_of<T>(), width}, ord, first, x, t, kTOff);
  Gathered<TOut> out{x_all.download(), std::vector<TOut>(rows * width + kTOff + 2)};
  t.read(out.t_all.data(), out.t_all.size() * sizeof(TOut));
  return out;
}

// Same bits, NaN included (the padding must stay the poison).
template <typename V>
bool same_bits(const std::vector<V>& a, const std::vector<V>& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](V p, V q) {
           return std::memcmp(&p, &q, sizeof(V)) == 0 || (p != p && q != q);
         });
}

// Gathers `rows` of `count` samples through a shuffled order and compares every element of both
// whole buffers (view and padding) with the reference.
template <typename X, typename T>
void check_against_reference(const std::vector<X>& xs, const std::vector<T>& ts, size_t count, size_t rows,
                             size_t features, size_t width, unsigned seed) {
  using TOut = std::conditional_t<std::is_same_v<T, float>, float, int>;
  std::vector<uint32_t> order(count);
  std::iota(order.begin(), order.end(), 0u);
  std::shuffle(order.begin(), order.end(), std::mt19937(seed));
  const size_t first = std::min<size_t>(17, count - rows);
  const auto got = run_device(xs, ts, order, first, rows, features, width);
  std::vector<float> x_ref(got.x_all.size(), std::nanf(""));
  std::vector<TOut> t_ref(got.t_all.size(), poison<TOut>());
  anycl::reference::gather_typed(xs.data(), ts.data(), order.data(), first, rows, features, width,
                                 x_ref.data() + kXOffRows * features, t_ref.data() + kTOff);
  const std::string what =
      fmt::format("gather {}→x, {}→targets: rows {} features {} width {}", anycl::dtype_name(dtype_of<X>()),
                  anycl::dtype_name(dtype_of<T>()), rows, features, width);
  CHECK_MESSAGE(same_bits(got.x_all, x_ref), what, ": x (view exact, padding untouched)");
  CHECK_MESSAGE(same_bits(got.t_all, t_ref), what, ": targets (view exact, padding untouched)");
}

}  // namespace

TEST_CASE("gather_batch picks rows through a permutation with exact pixel scaling and int labels") {
  const size_t count = 1100;
  unsigned seed = 1;
  for (auto [rows, features] : {std::pair<size_t, size_t>{1, 1}, {7, 31}, {3, 40}, {65, 784}, {1025, 7}}) {
    const auto images = random_bytes(count * features, 255, seed++);
    const auto labels = random_bytes(count, 9, seed++);
    check_against_reference(images, labels, count, rows, features, 1, seed++);
  }
}

// Every byte value: the device must give float(v)/255.0f bit for bit, like Dataset::normalized.
TEST_CASE("gather_batch normalises every byte value exactly as the host divides by 255") {
  std::vector<uint8_t> images(256);
  std::iota(images.begin(), images.end(), 0);
  const auto got = run_device(images, std::vector<uint8_t>{7}, {0}, 0, 1, 256);
  std::vector<float> expect(256);
  for (int v = 0; v < 256; ++v) expect[size_t(v)] = float(v) / 255.0f;
  const std::vector<float> row(got.x_all.begin() + long(kXOffRows * 256),
                               got.x_all.begin() + long(kXOffRows * 256 + 256));
  anycl::test::check_close(row, expect, 0, 0, "v/255 for v = 0..255");
  CHECK(got.t_all[kTOff] == 7);
}

TEST_CASE("gather_batch copies float features as given with int32 class indices beyond 255") {
  const size_t count = 700;
  unsigned seed = 11;
  for (auto [rows, features] : {std::pair<size_t, size_t>{1, 1}, {9, 2}, {64, 33}, {513, 5}}) {
    auto xs = anycl::test::random_floats(count * features, -1e6f, 1e6f, seed++);
    xs[0] = -0.0f;  // a signed zero travels unchanged
    std::vector<int32_t> ys(count);
    std::mt19937 rng(seed++);
    for (auto& y : ys) y = int32_t(rng() % 100000);
    check_against_reference(xs, ys, count, rows, features, 1, seed++);
  }
}

TEST_CASE("gather_batch copies float targets of any width, wider or narrower than the features") {
  const size_t count = 300;
  unsigned seed = 31;
  for (auto [rows, features, width] :
       {std::tuple<size_t, size_t, size_t>{1, 1, 1}, {10, 2, 5}, {33, 17, 3}, {5, 16, 37}, {128, 3, 3}}) {
    const auto xs = anycl::test::random_floats(count * features, -3.f, 3.f, seed++);
    const auto ts = anycl::test::random_floats(count * width, -100.f, 100.f, seed++);
    check_against_reference(xs, ts, count, rows, features, width, seed++);
  }
  // Byte features with float targets: the normalisation and the targets together.
  const auto images = random_bytes(count * 6, 255, seed);
  check_against_reference(images, anycl::test::random_floats(count * 2, 0.f, 1.f, seed + 1), count, 40, 6, 2,
                          seed + 2);
}

TEST_CASE("gather_batch rejects integer features with a clear message") {
  auto& rt = anycl::test::runtime();
  anycl::GatherBatch op(rt);
  const auto buf = device_copy(rt, std::vector<int32_t>(4, 0));
  anycl::Tensor x(rt, {1, 4});
  anycl::DeviceBuffer t = device_copy(rt, std::vector<int32_t>(1, 0));
  CHECK_THROWS_WITH_AS(op.run({&buf, DType::i32, &buf, DType::i32, 1}, buf, 0, x, t),
                       doctest::Contains("features must be u8 or f32"), anycl::ValidationError);
}
