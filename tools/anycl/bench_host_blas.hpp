// The host BLAS baseline of `anycl bench` (OpenBLAS through CBLAS, when the build found it),
// including the guard against OpenBLAS running a slower core type than the CPU supports.
#pragma once

#include <cstddef>
#include <string>

namespace anycl::cli {

/// True when the command was built with OpenBLAS.
bool host_blas_available();
/// "OpenBLAS 0.3.21 … core SkylakeX, 2 threads" (or why there is none).
std::string host_blas_description();
/// On an AVX-512 CPU where OpenBLAS picked another core and OPENBLAS_CORETYPE is unset, sets
/// OPENBLAS_CORETYPE=SkylakeX and re-executes this process (OpenBLAS reads it when it loads).
/// Returns only when no re-exec was needed (or it failed); `note` then says what OpenBLAS uses.
void ensure_fast_openblas_core(char** argv, std::string& note);
/// Row-major C(m,n) = op(A)·op(B) (+ beta·C) on the host.
void host_sgemm(bool trans_a, bool trans_b, size_t m, size_t n, size_t k, float alpha, const float* a,
                size_t lda, const float* b, size_t ldb, float beta, float* c, size_t ldc);

}  // namespace anycl::cli
