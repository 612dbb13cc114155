// GEMM through CLBlast: row-major C = alpha·op(A)·op(B) + beta·C on the runtime's queue,
// with every CLBlast status turned into an exception naming the routine and shapes.
//
//   anycl::gemm(rt, Trans::no, Trans::no, m, n, k, 1.f, a, 0, k, b, 0, n, 0.f, c, 0, n);
#pragma once

#include <utility>
#include <vector>

#include "anycl/runtime.hpp"
#include "anycl/tensor.hpp"

namespace anycl {

enum class Trans { no, yes };

/// Single-precision GEMM on raw buffers; offsets and leading dimensions in elements. Enqueued, no wait.
void gemm(Runtime& rt, Trans ta, Trans tb, size_t m, size_t n, size_t k, float alpha, const DeviceBuffer& a,
          size_t a_offset, size_t lda, const DeviceBuffer& b, size_t b_offset, size_t ldb, float beta,
          DeviceBuffer& c, size_t c_offset, size_t ldc);

/// Double-precision GEMM; throws ValidationError when the device has no fp64.
void gemm(Runtime& rt, Trans ta, Trans tb, size_t m, size_t n, size_t k, double alpha, const DeviceBuffer& a,
          size_t a_offset, size_t lda, const DeviceBuffer& b, size_t b_offset, size_t ldb, double beta,
          DeviceBuffer& c, size_t c_offset, size_t ldc);

/// c = alpha·op(a)·op(b) + beta·c on 2-D tensors (shapes checked).
void matmul(const Tensor& a, Trans ta, const Tensor& b, Trans tb, Tensor& c, float alpha = 1.f,
            float beta = 0.f);

/// `batch` single-precision GEMMs C_i = alpha·op(A_i)·op(B_i) + beta·C_i (row-major), A_i at
/// a_offset + i·a_stride (a stride of 0 shares A), likewise B and C: CLBlast's GemmStridedBatched where
/// each operand is packed (a stride of its rows × its leading dimension) from a buffer's start or a
/// sub-buffer's, one GEMM a batch otherwise (CLBlast 1.5.3's indirect kernel ignores other strides).
void gemm_strided_batched(Runtime& rt, Trans ta, Trans tb, size_t m, size_t n, size_t k, float alpha,
                          const DeviceBuffer& a, size_t a_offset, size_t lda, size_t a_stride,
                          const DeviceBuffer& b, size_t b_offset, size_t ldb, size_t b_stride, float beta,
                          DeviceBuffer& c, size_t c_offset, size_t ldc, size_t c_stride, size_t batch);

/// The multiples to pad an m×n×k product's C (row-major: m rows, n columns) to, with its operands
/// laid out to match, so that CLBlast computes it without copying any operand into a temporary:
/// where `gemm` asks for it column-major on CLBlast's indirect kernel (see blas.cpp), n to the
/// kernel's MWG and m to its NWG, with op(A) and op(B) then wanted with k as their outer index (A
/// given transposed, B not); elsewhere 1 and 1 (nothing to gain). Also true for
/// gemm_strided_batched, where CLBlast allocates such temporaries on every call.
struct GemmPadding {
  size_t m = 1, n = 1;
};
GemmPadding gemm_padding(Runtime& rt, size_t m, size_t n, size_t k);

/// Whether `gemm` runs an m×n×k product on CLBlast's indirect kernel in its GEMMK=0 form, which
/// reads op(A) without copying it only where A is given transposed (k as its outer index), in
/// either layout `gemm` asks for: a caller holding A untransposed saves CLBlast's copy by
/// transposing it with `transpose` (faster) and passing Trans::yes.
bool gemm_reads_a_transposed(Runtime& rt, size_t m, size_t n, size_t k);

/// How a Dense layer computes dx = dz·Wᵀ (batch × in × units) on a runtime, as trained: one GEMM NT;
/// W transposed by anycl's kernel, then a GEMM NN (where `anycl tune` measured it faster); or, where
/// CLBlast's indirect kernel reads A transposed, dz and W transposed, then a GEMM TN.
enum class DenseDxForm { gemm_nt, transpose_w_gemm_nn, transposes_gemm_tn };
/// The form dx takes on `rt` now (its tuning decides; `anycl bench` times each GEMM so).
DenseDxForm dense_dx_form(Runtime& rt, size_t batch, size_t in, size_t units);

/// CLBlast's Convgemm (cross-correlation, no dilation, symmetric padding): im:(batch, C, H, W),
/// kernels:(F, C, K, K) → result:(batch, F, OH, OW), all NCHW.
void convgemm(Runtime& rt, size_t channels, size_t height, size_t width, size_t kernel, size_t pad,
              size_t stride, size_t filters, size_t batch, const DeviceBuffer& im, size_t im_offset,
              const DeviceBuffer& kernels, size_t kernels_offset, DeviceBuffer& result, size_t result_offset);

/// out = aᵀ (a: r×c, out: c×r) by anycl's block-transpose kernel, faster than CLBlast's Omatcopy on
/// CPU devices (docs/dev/performance-log.md).
void transpose(const Tensor& a, Tensor& out);

/// b = op(a), row-major, through CLBlast's Omatcopy: a is rows×cols (leading dimension lda), b is
/// op(a)'s shape with leading dimension ldb (a wider ldb copies into a padded matrix, leaving the
/// padding as it was).
void omatcopy(Runtime& rt, Trans t, size_t rows, size_t cols, const DeviceBuffer& a, size_t a_offset,
              size_t lda, DeviceBuffer& b, size_t b_offset, size_t ldb);

/// Compiles CLBlast's kernels for each (ta, tb) pair by running one GEMM of each square size
/// (small sizes take CLBlast's direct kernel, large ones its indirect one), then waits: the first
/// real call is then not slowed by compilation. Call from one thread at a time (CLBlast 1.5.3's
/// kernel cache is not safe against two threads compiling the same kernel).
void gemm_warmup(Runtime& rt, const std::vector<std::pair<Trans, Trans>>& transposes,
                 const std::vector<size_t>& sizes = {64, 512});

}  // namespace anycl
