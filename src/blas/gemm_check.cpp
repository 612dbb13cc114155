// An exactness check of GEMM on a device: small-integer inputs make every product and sum exact in
// float, so the device must match a host loop bit for bit. Long sides are checked shortened, keeping
// their partial tiles and the kernel the switch picks (detail::checked_gemm_shape).
#include "anycl/blas/tuning.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdint>
#include <map>
#include <string>

#include "anycl/blas/blas.hpp"
#include "anycl/tensor.hpp"
#include "blas/clblast_params.hpp"
#include "blas/tuning/tuning_check.hpp"

namespace anycl {
namespace {

std::vector<float> small_ints(size_t n, unsigned seed) {
  std::vector<float> v(n);
  uint32_t x = seed * 2654435761u + 1;
  for (float& f : v) {
    x = x * 1664525u + 1013904223u;
    f = float(int((x >> 16) % 7) - 3);  // -3…3
  }
  return v;
}

// Row-major C(m,n) = op(A)·op(B) on the host.
std::vector<float> host_gemm(const GemmShape& s, const std::vector<float>& a, const std::vector<float>& b) {
  std::vector<float> c(s.m * s.n, 0.f);
  for (size_t i = 0; i < s.m; ++i)
    for (size_t p = 0; p < s.k; ++p) {
      const float av = s.trans_a ? a[p * s.m + i] : a[i * s.k + p];
      for (size_t j = 0; j < s.n; ++j) c[i * s.n + j] += av * (s.trans_b ? b[j * s.k + p] : b[p * s.n + j]);
    }
  return c;
}

std::string mismatch(Runtime& rt, const GemmShape& s) {
  const auto a = small_ints(s.m * s.k, 1), b = small_ints(s.k * s.n, 2);
  const Tensor ta =
      Tensor::from_host(rt, s.trans_a ? std::vector<size_t>{s.k, s.m} : std::vector<size_t>{s.m, s.k}, a);
  const Tensor tb =
      Tensor::from_host(rt, s.trans_b ? std::vector<size_t>{s.n, s.k} : std::vector<size_t>{s.k, s.n}, b);
  Tensor tc(rt, {s.m, s.n});
  tc.fill(-12345.f);  // an element the GEMM never writes is caught too
  matmul(ta, s.trans_a ? Trans::yes : Trans::no, tb, s.trans_b ? Trans::yes : Trans::no, tc);
  const auto got = tc.download(), want = host_gemm(s, a, b);
  size_t wrong = 0, first = 0;
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i] && wrong++ == 0) first = i;
  if (wrong == 0) return "";
  return fmt::format("{}{} {}x{}x{}: {} of {} elements wrong, e.g. [{}] = {} instead of {}",
                     s.trans_a ? 'T' : 'N', s.trans_b ? 'T' : 'N', s.m, s.n, s.k, wrong, got.size(), first,
                     got[first], want[first]);
}

// A side longer than this is checked at kCheckedSide plus its remainder modulo kTileMultiple: the same
// whole and partial tiles for every tile size CLBlast's kernels take (powers of two up to 128), at a
// host reference a CPU computes in well under a second (4096³ took 68.7 GFLOP of host loop per
// shape: `anycl tune` at 4096³ timed none of its candidates in 50 s on an H200).
constexpr size_t kLongSide = 640, kCheckedSide = 512, kTileMultiple = 128;

size_t checked_side(size_t side) noexcept {
  return side > kLongSide ? kCheckedSide + side % kTileMultiple : side;
}

// Whether CLBlast's GEMM routine sends m·n·k to its indirect kernel at switch `sw` (m·n·k ≥ sw³).
bool indirect(size_t mnk, size_t sw) noexcept {
  if (sw >= (size_t(1) << 21)) return false;  // sw³ past any m·n·k (and past size_t beyond 2^21)
  return mnk >= sw * sw * sw;
}

}  // namespace

namespace detail {

GemmShape checked_gemm_shape(Runtime& rt, const GemmShape& s) {
  GemmShape c = s;
  c.m = checked_side(s.m), c.n = checked_side(s.n), c.k = checked_side(s.k);
  if (c.m == s.m && c.n == s.n && c.k == s.k) return s;
  std::map<std::string, size_t> routine;
  if (detail::clblast_params::retrieve(rt.info().id, "GemmRoutine", routine) !=
          clblast::StatusCode::kSuccess ||
      !routine.count("XGEMM_MIN_INDIRECT_SIZE"))
    return s;
  const size_t sw = routine.at("XGEMM_MIN_INDIRECT_SIZE");
  return indirect(s.m * s.n * s.k, sw) == indirect(c.m * c.n * c.k, sw) ? c : s;
}

}  // namespace detail

std::string gemm_mismatch(Runtime& rt, const std::vector<GemmShape>& shapes) {
  std::vector<GemmShape> all;
  all.reserve(shapes.size() + 12);  // and the odd sizes below
  for (const auto& s : shapes) all.push_back(detail::checked_gemm_shape(rt, s));
  for (const auto& [m, n, k] : {std::array<size_t, 3>{7, 7, 7}, {31, 17, 65}, {65, 33, 9}})
    for (bool ta : {false, true})
      for (bool tb : {false, true}) all.push_back({"odd", ta, tb, m, n, k});
  for (const auto& s : all)
    if (std::string bad = mismatch(rt, s); !bad.empty()) return bad;
  return "";
}

}  // namespace anycl
