// The block-transpose kernel against a host loop: shapes below, at and past its 8 × 8 blocks, views
// at offsets, leading dimensions wider than the matrix with the padding left as it was, and shapes
// or buffers that do not fit (the public `transpose` over it: test_blas.cpp).
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <anycl/error.hpp>

#include <algorithm>
#include <cmath>
#include <vector>

#include "helpers.hpp"
#include "ops/transpose.hpp"

namespace {

struct Layout {
  size_t rows, cols, a_offset = 0, lda_pad = 0, b_offset = 0, ldb_pad = 0;
};

void check_transpose(const Layout& s, unsigned seed) {
  auto& rt = anycl::test::runtime();
  const size_t lda = s.cols + s.lda_pad, ldb = s.rows + s.ldb_pad;
  const auto a = anycl::test::random_floats(s.a_offset + s.rows * lda, -1, 1, seed);
  std::vector<float> expected(s.b_offset + s.cols * ldb, std::nanf(""));  // padding stays NaN
  for (size_t r = 0; r < s.rows; ++r)
    for (size_t c = 0; c < s.cols; ++c) expected[s.b_offset + c * ldb + r] = a[s.a_offset + r * lda + c];
  const anycl::DeviceBuffer da = anycl::test::device_copy(rt, a);
  anycl::DeviceBuffer db = anycl::test::device_copy(rt, std::vector<float>(expected.size(), std::nanf("")));
  anycl::BlockTranspose(rt).run(s.rows, s.cols, da, s.a_offset, lda, db, s.b_offset, ldb);
  const auto got = anycl::test::read_back<float>(db, expected.size());
  size_t wrong = 0;
  for (size_t i = 0; i < got.size(); ++i)
    wrong += !(got[i] == expected[i] || (std::isnan(got[i]) && std::isnan(expected[i])));
  CHECK_MESSAGE(wrong == 0, fmt::format("transpose {}x{} offsets {},{} lda {} ldb {}: {} of {} floats wrong",
                                        s.rows, s.cols, s.a_offset, s.b_offset, lda, ldb, wrong, got.size()));
}

}  // namespace

TEST_CASE("block transpose matches the host at every edge of its 8x8 blocks, at offsets and padded") {
  unsigned seed = 1;
  for (const size_t rows : {1, 7, 8, 9, 16, 23})
    for (const size_t cols : {1, 5, 8, 15, 17, 40}) {
      check_transpose({rows, cols}, seed++);
      check_transpose({rows, cols, 3, 2, 5, 9}, seed++);
    }
  check_transpose({128, 784}, seed++);  // the reference MLP's first-layer input
  check_transpose({784, 128, 0, 16, 0, 0}, seed++);
}

TEST_CASE("block transpose refuses leading dimensions below the width and matrices past their buffers") {
  auto& rt = anycl::test::runtime();
  const anycl::DeviceBuffer a = anycl::test::device_copy(rt, std::vector<float>(64, 1.f));
  anycl::DeviceBuffer b = anycl::test::device_copy(rt, std::vector<float>(64, 0.f));
  anycl::BlockTranspose op(rt);
  CHECK_THROWS_AS(op.run(8, 8, a, 0, 7, b, 0, 8), anycl::ValidationError);  // lda < cols
  CHECK_THROWS_AS(op.run(8, 8, a, 0, 8, b, 0, 7), anycl::ValidationError);  // ldb < rows
  CHECK_THROWS_AS(op.run(8, 8, a, 1, 8, b, 0, 8), anycl::ValidationError);  // a runs past its buffer
  CHECK_THROWS_AS(op.run(8, 8, a, 0, 8, b, 1, 8), anycl::ValidationError);  // b runs past its buffer
  CHECK_THROWS_AS(op.run(8, 9, a, 0, 9, b, 0, 8), anycl::ValidationError);  // 72 floats in 64
  CHECK_NOTHROW(op.run(8, 8, a, 0, 8, b, 0, 8));
}

// A split product's slices, computed transposed, summed back (Dense's forward split turned round):
// out[c][r] = Σ_s parts[s][r][c] in slice order (the host adds in the same order: the same bits), the
// parts' padding columns past out's rows never read (NaN there), out written at its view's offset.
TEST_CASE("block transpose sums slices back transposed, in slice order, and refuses what does not fit") {
  auto& rt = anycl::test::runtime();
  const size_t slices = 3, rows = 10, cols = 7, ld = 9, stride = rows * ld + 4;
  std::vector<float> parts = anycl::test::random_floats(slices * stride, -1, 1, 77);
  for (size_t s = 0; s < slices; ++s)
    for (size_t r = 0; r < rows; ++r)
      for (size_t c = cols; c < ld; ++c) parts[s * stride + r * ld + c] = std::nanf("");
  std::vector<float> want(cols * rows);
  for (size_t c = 0; c < cols; ++c)
    for (size_t r = 0; r < rows; ++r) {
      float sum = 0.f;
      for (size_t s = 0; s < slices; ++s) sum += parts[s * stride + r * ld + c];
      want[c * rows + r] = sum;
    }
  const auto dp = anycl::Tensor::from_host(rt, {parts.size()}, parts);
  auto whole = anycl::Tensor::from_host(rt, {cols + 2, rows}, std::vector<float>((cols + 2) * rows, -5.f));
  anycl::Tensor out = whole.rows(1, cols);
  anycl::BlockTranspose op(rt);
  op.sum_slices(dp, slices, stride, ld, rows, out);
  CHECK(out.download() == want);
  const auto all = whole.download();
  CHECK(std::count(all.begin(), all.begin() + rows, -5.f) == long(rows));  // the rows around out untouched
  CHECK(std::count(all.end() - long(rows), all.end(), -5.f) == long(rows));
  CHECK_THROWS_AS(op.sum_slices(dp, 0, stride, ld, rows, out), anycl::ValidationError);  // no slices
  CHECK_THROWS_AS(op.sum_slices(dp, slices, stride, cols - 1, rows, out),
                  anycl::ValidationError);  // ld < cols
  CHECK_THROWS_AS(op.sum_slices(dp, slices, rows * ld - 1, ld, rows, out),
                  anycl::ValidationError);  // overlap
  CHECK_THROWS_AS(op.sum_slices(dp, slices + 1, stride, ld, rows, out),
                  anycl::ValidationError);  // past parts
  CHECK_THROWS_AS(op.sum_slices(dp, slices, stride, ld, rows + 1, out),
                  anycl::ValidationError);  // out's width
}
