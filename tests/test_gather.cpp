// Device batch gather against tests/reference/gather.hpp: rows through a permutation, pixels
// exactly v/255 (as the host Dataset gives them), labels as int, outputs at offsets.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <anycl/ops/gather.hpp>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "helpers.hpp"
#include "reference/gather.hpp"

namespace compute = anycl::compute;

namespace {

template <typename V>
compute::buffer device_copy(anycl::Runtime& rt, const std::vector<V>& v) {
  compute::buffer b(rt.context(), std::max<size_t>(v.size(), 1) * sizeof(V));
  rt.queue().enqueue_write_buffer(b, 0, v.size() * sizeof(V), v.data());
  return b;
}

std::vector<uint8_t> random_bytes(size_t n, int hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(0, hi);
  std::vector<uint8_t> v(n);
  for (auto& x : v) x = uint8_t(dist(rng));
  return v;
}

struct Gathered {
  std::vector<float> x_all;  // the whole x buffer, view at x_off
  std::vector<int> y_all;    // the whole label buffer, view at y_off
};
constexpr size_t kXOffRows = 2, kYOff = 3;
constexpr int kYPoison = -1;

Gathered run_device(const std::vector<uint8_t>& images, const std::vector<uint8_t>& labels,
                    const std::vector<uint32_t>& order, size_t first, size_t rows, size_t features) {
  auto& rt = anycl::test::runtime();
  anycl::GatherBatch op(rt);
  const auto img = device_copy(rt, images), lab = device_copy(rt, labels), ord = device_copy(rt, order);
  anycl::Tensor x_all(rt, {rows + kXOffRows + 1, features});
  x_all.fill(std::nanf(""));
  anycl::Tensor x = x_all.rows(kXOffRows, rows);
  auto y = device_copy(rt, std::vector<int>(rows + kYOff + 2, kYPoison));
  op.run(img, lab, ord, first, x, y, kYOff);
  Gathered out{x_all.download(), std::vector<int>(rows + kYOff + 2)};
  rt.queue().enqueue_read_buffer(y, 0, out.y_all.size() * sizeof(int), out.y_all.data());
  return out;
}

}  // namespace

TEST_CASE("gather_batch picks rows through a permutation with exact pixel scaling and int labels") {
  const size_t count = 1100;
  unsigned seed = 1;
  for (auto [rows, features] : {std::pair<size_t, size_t>{1, 1}, {7, 31}, {65, 784}, {1025, 7}}) {
    const auto images = random_bytes(count * features, 255, seed++);
    const auto labels = random_bytes(count, 9, seed++);
    std::vector<uint32_t> order(count);
    std::iota(order.begin(), order.end(), 0u);
    std::shuffle(order.begin(), order.end(), std::mt19937(seed++));
    const size_t first = std::min<size_t>(17, count - rows);
    const Gathered got = run_device(images, labels, order, first, rows, features);

    std::vector<float> x_ref(got.x_all.size(), std::nanf(""));
    std::vector<int> y_ref(got.y_all.size(), kYPoison);
    anycl::reference::gather_batch(images.data(), labels.data(), order.data(), first, rows, features,
                                   x_ref.data() + kXOffRows * features, y_ref.data() + kYOff);
    const std::string what = fmt::format("gather rows {} features {}", rows, features);
    // Padding stays NaN: compare the view exactly, and check the rest by NaN-ness.
    const std::vector<float> x_view(got.x_all.begin() + long(kXOffRows * features),
                                    got.x_all.begin() + long((kXOffRows + rows) * features));
    const std::vector<float> ref_view(x_ref.begin() + long(kXOffRows * features),
                                      x_ref.begin() + long((kXOffRows + rows) * features));
    anycl::test::check_close(x_view, ref_view, 0, 0, what + " x");
    size_t pad_written = 0;
    for (size_t i = 0; i < got.x_all.size(); ++i)
      if (i < kXOffRows * features || i >= (kXOffRows + rows) * features)
        pad_written += !std::isnan(got.x_all[i]);
    CHECK_MESSAGE(pad_written == 0, what, " wrote outside its view");
    CHECK_MESSAGE(got.y_all == y_ref, what, " labels");
  }
}

// Every byte value: the device must give float(v)/255.0f bit for bit, like Dataset::normalized.
TEST_CASE("gather_batch normalises every byte value exactly as the host divides by 255") {
  std::vector<uint8_t> images(256);
  std::iota(images.begin(), images.end(), 0);
  const Gathered got = run_device(images, {7}, {0}, 0, 1, 256);
  std::vector<float> expect(256);
  for (int v = 0; v < 256; ++v) expect[size_t(v)] = float(v) / 255.0f;
  const std::vector<float> row(got.x_all.begin() + long(kXOffRows * 256),
                               got.x_all.begin() + long(kXOffRows * 256 + 256));
  anycl::test::check_close(row, expect, 0, 0, "v/255 for v = 0..255");
  CHECK(got.y_all[kYOff] == 7);
}
