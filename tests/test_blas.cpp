// CLBlast GEMM against a host loop: all four transposes, awkward sizes, offsets and leading
// dimensions larger than the width, alpha/beta. Integer-valued inputs make results exact.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <anycl/blas/blas.hpp>
#include <anycl/blas/tuning.hpp>
#include <anycl/error.hpp>

#include <cmath>
#include <map>
#include <string>

#include "blas/clblast_params.hpp"
#include "helpers.hpp"
#include "indirect_gemm.hpp"
#include "reference/gemm.hpp"

using anycl::Trans;

namespace {

struct Case {
  size_t m, n, k;
};

struct Layout {
  size_t a = 5, b = 2, c = 7;  // offsets in elements: nothing aligned
  size_t pad = 3;              // leading dimension minus width
};

// Runs one GEMM on the device with padded leading dimensions and offsets, and compares it
// with the host reference over the whole C buffer (padding must be left untouched).
void check_gemm(Trans ta, Trans tb, Case s, float alpha, float beta, unsigned seed, Layout at = {}) {
  auto& rt = anycl::test::runtime();
  const size_t pad = at.pad, a_off = at.a, b_off = at.b, c_off = at.c;
  const size_t a_rows = ta == Trans::no ? s.m : s.k, a_cols = ta == Trans::no ? s.k : s.m;
  const size_t b_rows = tb == Trans::no ? s.k : s.n, b_cols = tb == Trans::no ? s.n : s.k;
  const size_t lda = a_cols + pad, ldb = b_cols + pad, ldc = s.n + pad;
  const auto a = anycl::test::random_ints(a_off + a_rows * lda, -3, 3, seed);
  const auto b = anycl::test::random_ints(b_off + b_rows * ldb, -3, 3, seed + 1);
  auto c = anycl::test::random_ints(c_off + s.m * ldc, -5, 5, seed + 2);

  auto da = anycl::Tensor::from_host(rt, {a.size()}, a);
  auto db = anycl::Tensor::from_host(rt, {b.size()}, b);
  auto dc = anycl::Tensor::from_host(rt, {c.size()}, c);
  anycl::DeviceBuffer c_buffer = dc.buffer();
  anycl::gemm(rt, ta, tb, s.m, s.n, s.k, alpha, da.buffer(), a_off, lda, db.buffer(), b_off, ldb, beta,
              c_buffer, c_off, ldc);
  const auto got = dc.download();

  anycl::reference::gemm(ta == Trans::yes, tb == Trans::yes, s.m, s.n, s.k, alpha, a.data() + a_off, lda,
                         b.data() + b_off, ldb, beta, c.data() + c_off, ldc);
  anycl::test::check_close(
      got, c, 0, 0,
      fmt::format("gemm {}{} m={} n={} k={} alpha={} beta={} offsets={},{},{}", ta == Trans::yes ? 'T' : 'N',
                  tb == Trans::yes ? 'T' : 'N', s.m, s.n, s.k, alpha, beta, a_off, b_off, c_off));
}

const Trans kTrans[] = {Trans::no, Trans::yes};

}  // namespace

TEST_CASE("gemm matches the host for all transposes and awkward sizes") {
  unsigned seed = 1;
  for (Case s : {Case{1, 1, 1}, Case{7, 7, 7}, Case{31, 31, 31}, Case{65, 65, 65}, Case{7, 31, 65},
                 Case{128, 512, 784}})
    for (Trans ta : kTrans)
      for (Trans tb : kTrans) check_gemm(ta, tb, s, 1.f, 0.f, seed++);
}

TEST_CASE("gemm at 1025 (larger than any tile)") {
  for (Trans ta : kTrans)
    for (Trans tb : kTrans) check_gemm(ta, tb, {1025, 1025, 1025}, 1.f, 0.f, 99);
}

TEST_CASE("gemm applies alpha and beta") {
  for (Trans ta : kTrans)
    for (Trans tb : kTrans) {
      check_gemm(ta, tb, {33, 17, 9}, 2.f, -1.f, 7);
      check_gemm(ta, tb, {33, 17, 9}, -0.5f, 3.f, 8);
    }
}

// The GEMM layer asks CLBlast for its indirect kernel in column-major order with the operands swapped
// (row-major where that pads to more tiles: n = 10 below)
// and for its direct kernel row-major (src/blas/blas.cpp): both paths, every transpose, offsets
// (unaligned, and aligned as a sub-buffer's start must be, where the indirect call reads and writes
// through sub-buffers), padded leading dimensions, alpha and beta.
TEST_CASE("gemm is exact on CLBlast's indirect kernel (asked column-major) and on its direct one") {
  auto& rt = anycl::test::runtime();
  std::map<std::string, size_t> before;
  REQUIRE(anycl::detail::clblast_params::retrieve(rt.info().id, "GemmRoutine", before) ==
          clblast::StatusCode::kSuccess);
  for (const size_t from : {size_t{1}, size_t{1} << 20}) {  // always indirect, then always direct
    anycl::GemmTuning routine;
    routine.kernels["GemmRoutine"] = {{"XGEMM_MIN_INDIRECT_SIZE", from}};
    anycl::apply_tuning(rt, routine);
    CAPTURE(from);
    unsigned seed = 40;
    const size_t aligned = rt.info().base_address_alignment / sizeof(float);
    REQUIRE(aligned > 0);
    // The last: whole tiles of the shipped sets, unpadded: CLBlast reads and writes the sub-buffers
    // themselves rather than copies of them.
    for (Case s : {Case{7, 31, 65}, Case{65, 33, 17}, Case{128, 10, 512}, Case{256, 128, 64}})
      for (Trans ta : kTrans)
        for (Trans tb : kTrans) {
          check_gemm(ta, tb, s, 1.f, 0.f, seed++);
          check_gemm(ta, tb, s, -0.5f, 2.f, seed++);
          check_gemm(ta, tb, s, 1.f, 1.f, seed++, {aligned, 3 * aligned, 2 * aligned, 0});
          check_gemm(ta, tb, s, 2.f, 0.f, seed++, {aligned, 0, 5 * aligned, 0});
        }
  }
  anycl::GemmTuning restore;
  restore.kernels["GemmRoutine"] = before;
  anycl::apply_tuning(rt, restore);
}

TEST_CASE("gemm with beta 0 ignores NaN already in C") {
  auto& rt = anycl::test::runtime();
  const size_t n = 40;
  const auto a = anycl::test::random_ints(n * n, -3, 3, 11), b = anycl::test::random_ints(n * n, -3, 3, 12);
  auto da = anycl::Tensor::from_host(rt, {n, n}, a), db = anycl::Tensor::from_host(rt, {n, n}, b);
  anycl::Tensor dc(rt, {n, n});
  dc.fill(std::nanf(""));
  anycl::matmul(da, Trans::no, db, Trans::no, dc);
  std::vector<float> ref(n * n, 0.f);
  anycl::reference::gemm(false, false, n, n, n, 1.f, a.data(), n, b.data(), n, 0.f, ref.data(), n);
  anycl::test::check_close(dc.download(), ref, 0, 0, "gemm over NaN-poisoned C");
}

TEST_CASE("matmul rejects shapes that do not fit - naming them") {
  auto& rt = anycl::test::runtime();
  anycl::Tensor a(rt, {4, 3}), b(rt, {4, 2}), c(rt, {4, 2});
  CHECK_THROWS_WITH_AS(anycl::matmul(a, Trans::no, b, Trans::no, c), doctest::Contains("(4, 3)"),
                       anycl::ValidationError);
  CHECK_NOTHROW(anycl::matmul(a, Trans::yes, b, Trans::no, c = anycl::Tensor(rt, {3, 2})));
}

TEST_CASE("gemm warm-up compiles every transpose pair without error") {
  auto& rt = anycl::test::runtime();
  CHECK_NOTHROW(anycl::gemm_warmup(
      rt, {{Trans::no, Trans::no}, {Trans::yes, Trans::no}, {Trans::no, Trans::yes}}, {16}));
}

TEST_CASE("double-precision gemm matches the host where the device has fp64") {
  auto& rt = anycl::test::runtime();
  if (!rt.info().fp64) ANYCL_SKIP_TEST(Missing::capability, rt.info().name + " has no cl_khr_fp64");
  const size_t m = 19, n = 23, k = 31;
  std::vector<double> a(m * k), b(k * n), c(m * n, 0.0);
  const auto ia = anycl::test::random_ints(a.size(), -3, 3, 21),
             ib = anycl::test::random_ints(b.size(), -3, 3, 22);
  std::copy(ia.begin(), ia.end(), a.begin());
  std::copy(ib.begin(), ib.end(), b.begin());
  auto make = [&](std::vector<double>& host) { return anycl::test::device_copy(rt, host); };
  auto da = make(a), db = make(b), dc = make(c);
  anycl::gemm(rt, Trans::no, Trans::no, m, n, k, 1.0, da, 0, k, db, 0, n, 0.0, dc, 0, n);
  std::vector<double> got(m * n);
  dc.read(got.data(), got.size() * sizeof(double));
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < n; ++j) {
      double ref = 0;
      for (size_t p = 0; p < k; ++p) ref += a[i * k + p] * b[p * n + j];
      CHECK(got[i * n + j] == ref);
    }
}

TEST_CASE("transpose on tensors goes through the block kernel and checks shapes") {
  auto& rt = anycl::test::runtime();
  const auto host = anycl::test::random_floats(13 * 21, -1, 1, 77);
  const auto a = anycl::Tensor::from_host(rt, {13, 21}, host);
  anycl::Tensor out(rt, {21, 13});
  const auto before = rt.counters().transposes;
  anycl::transpose(a, out);
  CHECK(rt.counters().transposes == before + 1);
  const auto got = out.download();
  for (size_t r = 0; r < 13; ++r)
    for (size_t c = 0; c < 21; ++c) REQUIRE(got[c * 13 + r] == host[r * 21 + c]);
  anycl::Tensor wrong(rt, {13, 21});
  CHECK_THROWS_AS(anycl::transpose(a, wrong), anycl::ValidationError);
}

// Asked column-major, CLBlast's indirect kernel computes C in place only where it is whole tiles:
// `gemm` then runs C's whole tiles and its last rows as two calls (on any device: IndirectGemmScope's
// MWG = NWG = 32); C is unpadded (ldc = n), as the split needs.
TEST_CASE("gemm splits C's last rows off where the rest is whole tiles of the indirect kernel, exactly") {
  auto& rt = anycl::test::runtime();
  const anycl::test::IndirectGemmScope indirect(rt);
  const size_t aligned = rt.info().base_address_alignment / sizeof(float);
  unsigned seed = 300;
  for (const Case s : {Case{69, 64, 19}, Case{40, 32, 33}})  // 2 tiles + 5 rows, 1 tile + 8 rows
    for (Trans ta : kTrans)
      for (Trans tb : kTrans) {
        const auto before = rt.counters().gemm_calls;
        check_gemm(ta, tb, s, 1.f, 0.f, seed++, {0, 0, 0, 0});
        CHECK(rt.counters().gemm_calls - before == 2);  // split
        check_gemm(ta, tb, s, -0.5f, 2.f, seed++, {aligned, 3, 2 * aligned, 0});
        const auto padded = rt.counters().gemm_calls;
        check_gemm(ta, tb, s, 1.f, 1.f, seed++, {aligned, 3, 2 * aligned, 1});  // ldc > n: one call
        CHECK(rt.counters().gemm_calls - padded == 1);
      }
}

// CLBlast 1.5.3's batched indirect kernel takes every operand it does not copy as packed from the
// buffer's start, whatever the strides and offsets given: gemm_strided_batched must be exact for any
// layout all the same (a skewed stride once trained Winograd's convolution on garbage).
TEST_CASE("gemm_strided_batched is exact for packed, skewed and shared strides and for offsets") {
  auto& rt = anycl::test::runtime();
  anycl::test::IndirectGemmScope indirect(rt);  // the kernel that ignored them, whatever the device
  const size_t aligned = rt.info().base_address_alignment / sizeof(float);
  REQUIRE(aligned > 0);
  unsigned seed = 90;
  const size_t m = 64, n = 96, k = 32, batch = 3;  // whole tiles of the scope's 32×32 set: no copies
  for (Trans ta : kTrans)
    for (Trans tb : kTrans) {
      const size_t a_rows = ta == Trans::no ? m : k, lda = ta == Trans::no ? k : m;
      const size_t b_rows = tb == Trans::no ? k : n, ldb = tb == Trans::no ? n : k, ldc = n;
      struct Strides {
        size_t a, b, c, offset;
      };
      for (const Strides st : {Strides{a_rows * lda, b_rows * ldb, m * ldc, 0},  // packed
                               Strides{a_rows * lda + aligned, b_rows * ldb + 16, m * ldc + aligned, 0},
                               Strides{0, b_rows * ldb, m * ldc, 0},  // A shared
                               Strides{a_rows * lda, b_rows * ldb, m * ldc, aligned},
                               Strides{a_rows * lda, b_rows * ldb, m * ldc, 3}}) {  // an unaligned offset
        CAPTURE(st.a);
        CAPTURE(st.b);
        CAPTURE(st.c);
        CAPTURE(st.offset);
        const size_t a_size = st.offset + st.a * (batch - 1) + a_rows * lda;
        const size_t b_size = st.offset + st.b * (batch - 1) + b_rows * ldb;
        const size_t c_size = st.offset + st.c * (batch - 1) + m * ldc;
        const auto a = anycl::test::random_ints(a_size, -3, 3, seed++);
        const auto b = anycl::test::random_ints(b_size, -3, 3, seed++);
        auto c = anycl::test::random_ints(c_size, -5, 5, seed++);
        auto da = anycl::Tensor::from_host(rt, {a.size()}, a);
        auto db = anycl::Tensor::from_host(rt, {b.size()}, b);
        auto dc = anycl::Tensor::from_host(rt, {c.size()}, c);
        anycl::DeviceBuffer c_buffer = dc.buffer();
        anycl::gemm_strided_batched(rt, ta, tb, m, n, k, 1.f, da.buffer(), st.offset, lda, st.a, db.buffer(),
                                    st.offset, ldb, st.b, 0.5f, c_buffer, st.offset, ldc, st.c, batch);
        for (size_t i = 0; i < batch; ++i)
          anycl::reference::gemm(ta == Trans::yes, tb == Trans::yes, m, n, k, 1.f,
                                 a.data() + st.offset + i * st.a, lda, b.data() + st.offset + i * st.b, ldb,
                                 0.5f, c.data() + st.offset + i * st.c, ldc);
        anycl::test::check_close(dc.download(), c, 0, 0, "gemm_strided_batched");
      }
    }
}
