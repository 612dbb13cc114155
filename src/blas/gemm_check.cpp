// An exactness check of GEMM on a device: small-integer inputs make every product and sum exact in
// float, so the device must match a host loop bit for bit.
#include "anycl/blas/tuning.hpp"

#include <fmt/format.h>

#include <array>
#include <cstdint>

#include "anycl/blas/blas.hpp"
#include "anycl/tensor.hpp"

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

}  // namespace

std::string gemm_mismatch(Runtime& rt, const std::vector<GemmShape>& shapes) {
  std::vector<GemmShape> all = shapes;
  for (const auto& [m, n, k] : {std::array<size_t, 3>{7, 7, 7}, {31, 17, 65}, {65, 33, 9}})
    for (bool ta : {false, true})
      for (bool tb : {false, true}) all.push_back({"odd", ta, tb, m, n, k});
  for (const auto& s : all)
    if (std::string bad = mismatch(rt, s); !bad.empty()) return bad;
  return "";
}

}  // namespace anycl
