// Winograd F(2×2, 3×3) forward pass of a 3×3, stride-1 convolution (cl_kernels/conv_winograd.cl):
// the weights and x transformed to 16 planes each, a CLBlast GEMM for each plane (16
// products of F × C by C × tiles, where im2col + GEMM multiplies F × 9C by 9C × pixels: 2.25 times
// fewer multiplications), and the inverse transform with the bias and activation into y. Conv2D
// chooses it (ConvForward::winograd, and automatic on a CPU); the backward pass stays its GEMMs'.
#pragma once

#include <array>
#include <cstddef>

#include "activation.hpp"
#include "anycl/blas/tuning.hpp"
#include "anycl/nn/geometry.hpp"
#include "anycl/tensor.hpp"
#include "runtime/runtime_impl.hpp"

namespace anycl {

class ConvWinogradOps {
 public:
  /// The transforms' 4×4 tiles: 16 planes, each output tile 2×2.
  static constexpr size_t kPlanes = 16, kTile = 2;
  /// Whether the geometry is one this algorithm computes: a 3×3 kernel at stride 1.
  static bool fits(const ConvGeometry& g) noexcept { return g.kernel == 3 && g.stride == 1; }
  /// Output tiles of one image (⌈OH/2⌉·⌈OW/2⌉).
  static size_t tiles_per_image(const ConvGeometry& g) noexcept {
    return ((g.out_h + kTile - 1) / kTile) * ((g.out_w + kTile - 1) / kTile);
  }
  /// The GEMM (one a plane, 16 calls) a forward pass over `batch` images runs on `rt` (with its padding), for
  /// tuning.
  static GemmShape gemm_shape(Runtime* rt, const ConvGeometry& g, size_t filters, size_t batch);

  /// Fetches the kernels once; launches reuse them.
  explicit ConvWinogradOps(Runtime& rt);
  /// y:(batch, F, OH·OW) = act(W ⊛ x + bias[f]) for x:(batch, C·H·W), W:(F, C·3·3) at stride 1 (any
  /// padding in g); for gelu (activation_keeps_input) z, shaped as y, gets the value before the
  /// activation (required then). Its scratch (U, V, M: 16 planes each) grows on first use.
  void forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, const ConvGeometry& g,
               Activation act, Tensor* z = nullptr);
  /// Floats of scratch a forward pass over `batch` images uses on `rt` (for activation estimates).
  static size_t scratch_floats(Runtime* rt, const ConvGeometry& g, size_t filters, size_t batch);

 private:
  struct Layout {
    size_t tiles, fp, tp;     // T = batch·tiles per image; F and T padded as gemm_padding asks
    size_t v_plane, m_plane;  // V's and M's plane strides: C·tp and fp·tp, then a cache line more
  };
  static Layout layout(Runtime* rt, const ConvGeometry& g, size_t filters, size_t batch);
  Runtime& rt_;
  compute::kernel weights_;
  // The input and output stages by range: [0] 3-D over the tiles, [1] one work-item per row of tiles,
  // which every CPU driver runs (Runtime::row_kernels' and Intel's); the output's also by Activation.
  std::array<compute::kernel, 2> input_;
  std::array<std::array<compute::kernel, 7>, 2> output_;
  Tensor u_, v_, m_;  // (16, C, fp), (16, C, tp) with its padding columns zero, (16, fp, tp) (+ strides)
};

}  // namespace anycl
