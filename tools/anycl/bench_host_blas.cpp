// OpenBLAS glue for the bench. OpenBLAS picks its kernels when it loads; on some AVX-512 CPUs
// (this repository's CI machine: AMD EPYC reported as "Cooperlake") its pick runs SGEMM ~3×
// slower than its SkylakeX kernels, and a baseline must not be sandbagged like that.
#include "bench_host_blas.hpp"

#include <fmt/format.h>
#ifdef __linux__
#include <unistd.h>
#endif

#include <cerrno>
#include <cstdlib>
#include <cstring>

#ifdef ANYCL_HAVE_OPENBLAS
#include <cblas.h>
extern "C" char* openblas_get_corename(void);
extern "C" char* openblas_get_config(void);
#endif

namespace anycl::cli {

#ifdef ANYCL_HAVE_OPENBLAS
bool host_blas_available() { return true; }

std::string host_blas_description() {
  return fmt::format("{} — core {}, {} threads", openblas_get_config(), openblas_get_corename(),
                     openblas_get_num_threads());
}

void ensure_fast_openblas_core(char** argv, std::string& note) {
  const std::string core = openblas_get_corename();
  const char* forced = std::getenv("OPENBLAS_CORETYPE");
  if (forced && *forced && !std::getenv("ANYCL_BENCH_REEXEC")) {
    note = fmt::format("OpenBLAS core {} (OPENBLAS_CORETYPE={})", core, forced);
    return;
  }
#ifdef __linux__  // re-executing this program in place: Linux only (elsewhere the note says so)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f") && core != "SkylakeX" && !std::getenv("ANYCL_BENCH_REEXEC")) {
    ::setenv("OPENBLAS_CORETYPE", "SkylakeX", 1);
    ::setenv("ANYCL_BENCH_REEXEC", core.c_str(), 1);
    ::execv("/proc/self/exe", argv);  // returns only on failure
    note =
        fmt::format("OpenBLAS core {} (could not re-execute with SkylakeX: {})", core, std::strerror(errno));
    return;
  }
#else
  (void)argv;
#endif
  const char* was = std::getenv("ANYCL_BENCH_REEXEC");
  note = was ? fmt::format(
                   "OpenBLAS core {} (auto-detected {} runs slower on this AVX-512 CPU; set "
                   "OPENBLAS_CORETYPE to choose)",
                   core, was)
             : fmt::format("OpenBLAS core {} (auto-detected)", core);
}

void host_sgemm(bool ta, bool tb, size_t m, size_t n, size_t k, float alpha, const float* a, size_t lda,
                const float* b, size_t ldb, float beta, float* c, size_t ldc) {
  cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, int(m), int(n),
              int(k), alpha, a, int(lda), b, int(ldb), beta, c, int(ldc));
}
#else
bool host_blas_available() { return false; }
std::string host_blas_description() {
  return "none (built without OpenBLAS — install libopenblas-dev and re-run cmake)";
}
void ensure_fast_openblas_core(char**, std::string& note) { note = host_blas_description(); }
void host_sgemm(bool ta, bool tb, size_t m, size_t n, size_t k, float alpha, const float* a, size_t lda,
                const float* b, size_t ldb, float beta, float* c, size_t ldc) {
  // A plain loop, so the host MLP still runs (slowly) without OpenBLAS; the bench says so.
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < n; ++j) {
      float s = 0;
      for (size_t p = 0; p < k; ++p)
        s += (ta ? a[p * lda + i] : a[i * lda + p]) * (tb ? b[j * ldb + p] : b[p * ldb + j]);
      c[i * ldc + j] = alpha * s + (beta == 0.f ? 0.f : beta * c[i * ldc + j]);
    }
}
#endif

}  // namespace anycl::cli
