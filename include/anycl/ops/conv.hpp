// Convolution as GEMM over NCHW tensors: a batched im2col, its adjoint col2im, and a sum of
// per-sample gradients over the batch (cl_kernels/conv.cl); the GEMMs themselves are CLBlast's.
#pragma once

#include <cstddef>

#include "anycl/tensor.hpp"

namespace anycl {

/// One 2-D convolution's geometry (square kernel; padding may be larger at the bottom/right).
struct ConvGeometry {
  size_t channels = 1, height = 1, width = 1;  // input (C, H, W)
  size_t kernel = 1, stride = 1;               // KH = KW = kernel
  size_t pad_top = 0, pad_left = 0;            // zeros before the image; the rest is implied by out_*
  size_t out_h = 1, out_w = 1;
  /// C·K·K: rows of one sample's column matrix; OH·OW: its columns.
  size_t patch() const noexcept { return channels * kernel * kernel; }
  size_t plane() const noexcept { return out_h * out_w; }
};

class ConvOps {
 public:
  /// Fetches the kernels once; launches reuse them.
  explicit ConvOps(Runtime& rt);
  /// col:(batch, C·K·K, OH·OW) from x:(batch, C·H·W); zeros where a window leaves the image.
  void im2col(const Tensor& x, Tensor& col, const ConvGeometry& g);
  /// dx:(batch, C·H·W) = the adjoint of im2col applied to dcol (gathered: deterministic).
  void col2im(const Tensor& dcol, Tensor& dx, const ConvGeometry& g);
  /// out:(n) = Σ_b parts[b, :] for parts:(batch, n), summed in order of b.
  void sum_over_batch(const Tensor& parts, size_t batch, Tensor& out);

 private:
  Runtime& rt_;
  compute::kernel im2col_, col2im_, sum_;
};

}  // namespace anycl
