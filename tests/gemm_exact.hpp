// A row-major GEMM through CLBlast with small integers, compared with the plain C++ reference: the
// result must be exact (every product and sum is an integer well inside float's range).
#pragma once

#include <fmt/format.h>
#include <anycl/blas/blas.hpp>
#include <anycl/runtime.hpp>

#include <vector>

#include "helpers.hpp"
#include "reference/gemm.hpp"

namespace anycl::test {

inline void check_gemm_exact(Runtime& rt, size_t m, size_t n, size_t k) {
  const auto a = random_ints(m * k, -3, 3, 11), b = random_ints(k * n, -3, 3, 12);
  auto ta = Tensor::from_host(rt, {m, k}, a), tb = Tensor::from_host(rt, {k, n}, b);
  Tensor tc(rt, {m, n});
  tc.fill(-999.f);
  matmul(ta, Trans::no, tb, Trans::no, tc);
  std::vector<float> ref(m * n);
  reference::gemm(false, false, m, n, k, 1.f, a.data(), k, b.data(), n, 0.f, ref.data(), n);
  check_close(tc.download(), ref, 0, 0, fmt::format("gemm {}x{}x{}", m, n, k));
}

}  // namespace anycl::test
