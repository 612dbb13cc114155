// Plain-loop reference GEMM (row-major, double accumulation): what CLBlast must reproduce.
#pragma once

#include <cstddef>

namespace anycl::reference {

/// c = alpha·op(a)·op(b) + beta·c, row-major with leading dimensions; beta == 0 ignores c.
inline void gemm(bool ta, bool tb, size_t m, size_t n, size_t k, float alpha, const float* a, size_t lda,
                 const float* b, size_t ldb, float beta, float* c, size_t ldc) {
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < n; ++j) {
      double sum = 0;
      for (size_t p = 0; p < k; ++p)
        sum += double(ta ? a[p * lda + i] : a[i * lda + p]) * double(tb ? b[j * ldb + p] : b[p * ldb + j]);
      const double prior = beta == 0.f ? 0.0 : double(beta) * c[i * ldc + j];
      c[i * ldc + j] = float(double(alpha) * sum + prior);
    }
}

}  // namespace anycl::reference
