// Plain-loop reference GEMM (row-major, double accumulation): what CLBlast must reproduce.
#pragma once

#include <cstddef>
#include <vector>

namespace anycl::reference {

// The dot products run uninstrumented in the sanitizer build: a billion checked reads per 1025-cubed
// GEMM are what the ASan pass spent its longest test on, and they check the test's own loop.
#if defined(__clang__)
#define ANYCL_REFERENCE_UNCHECKED __attribute__((no_sanitize("address", "undefined")))
#else
#define ANYCL_REFERENCE_UNCHECKED
#endif

ANYCL_REFERENCE_UNCHECKED inline double dot(const float* x, const float* y, size_t k) {
  double sum = 0;
  for (size_t p = 0; p < k; ++p) sum += double(x[p]) * double(y[p]);
  return sum;
}

/// c = alpha·op(a)·op(b) + beta·c, row-major with leading dimensions; beta == 0 ignores c.
inline void gemm(bool ta, bool tb, size_t m, size_t n, size_t k, float alpha, const float* a, size_t lda,
                 const float* b, size_t ldb, float beta, float* c, size_t ldc) {
  // op(a) copied row by row and op(b) column by column, so every dot product reads both in order
  // (strided reads made the 1025-cubed checks take a minute under ASan); the sums are unchanged.
  std::vector<float> rows(m * k), cols(n * k);
  for (size_t i = 0; i < m; ++i)
    for (size_t p = 0; p < k; ++p) rows[i * k + p] = ta ? a[p * lda + i] : a[i * lda + p];
  for (size_t j = 0; j < n; ++j)
    for (size_t p = 0; p < k; ++p) cols[j * k + p] = tb ? b[j * ldb + p] : b[p * ldb + j];
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < n; ++j) {
      const double sum = dot(rows.data() + i * k, cols.data() + j * k, k);
      const double prior = beta == 0.f ? 0.0 : double(beta) * c[i * ldc + j];
      c[i * ldc + j] = float(double(alpha) * sum + prior);
    }
}

}  // namespace anycl::reference
