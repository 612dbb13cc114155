// Matrix transposes on the device (cl_kernels/transpose.cl): each work-item moves an 8 × 8 block
// through registers. On PoCL's CPU devices it is 2–4× faster than CLBlast's Omatcopy and the
// copies CLBlast's indirect GEMM makes itself (docs/dev/performance-log.md), so the layers hand CLBlast
// operands already laid out as its kernel reads them (Dense) and `transpose` goes through it.
#pragma once

#include "anycl/device_buffer.hpp"
#include "anycl/tensor.hpp"
#include "runtime/runtime_impl.hpp"

namespace anycl {

class BlockTranspose {
 public:
  /// Fetches the kernel once; launches reuse it.
  explicit BlockTranspose(Runtime& rt);
  /// out = aᵀ on 2-D tensors (a: r×c, out: c×r); throws ValidationError when the shapes do not fit.
  void run(const Tensor& a, Tensor& out);
  /// b = aᵀ, row-major: a is rows × cols at a_offset (leading dimension lda), b is cols × rows at
  /// b_offset (leading dimension ldb); b's padding past `rows` is left as it was.
  void run(size_t rows, size_t cols, const DeviceBuffer& a, size_t a_offset, size_t lda, DeviceBuffer& b,
           size_t b_offset, size_t ldb);
  /// out = Σ_s parts[s]ᵀ, the slices added in order: parts[s] is a rows × ld matrix at s·stride in
  /// `parts` (its first out.rows() columns read), out is out.rows() × rows; ValidationError when they
  /// do not fit.
  void sum_slices(const Tensor& parts, size_t slices, size_t stride, size_t ld, size_t rows, Tensor& out);

 private:
  Runtime& rt_;
  compute::kernel kernel_, sum_kernel_;
};

}  // namespace anycl
