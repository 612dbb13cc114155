// Winograd F(4×4, 3×3) for a 3×3, stride-1 convolution (cl_kernels/conv_winograd.cl): the weights
// and the image transformed to 36 planes each, a CLBlast GEMM for each plane, and the inverse
// transform. The forward pass: 36 products of F × C by C × tiles, where im2col + GEMM multiplies
// F × 9C by 9C × pixels (4 times fewer multiplications), the bias and activation in the inverse
// transform. The input gradient: the same convolution of dz with W turned by 180° and its channels
// and filters swapped (36 products of C × F by F × tiles, where col2im's GEMM multiplies 9C × F by
// F × pixels), its inverse transform writing dx directly (no col2im). The weight gradient: F(4, 3)
// along x turned round, dz's 1×4 blocks and x's 1×6 rows transformed with the blocks as rows, 6
// products of F × blocks by blocks × 3C (each split into slices of blocks), and Gᵀ· of the slices' sum
// (where im2row + GEMM multiplies F × pixels by pixels × 9C: half the multiplications, and no column
// matrix). Conv2D chooses it (ConvForward::winograd, and automatic on a CPU).
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
  /// The transforms' 6×6 tiles: 36 planes, each output tile 4×4.
  static constexpr size_t kPlanes = 36, kTile = 4;
  /// Whether the geometry is one this algorithm computes: a 3×3 kernel at stride 1.
  static bool fits(const ConvGeometry& g) noexcept { return g.kernel == 3 && g.stride == 1; }
  /// The input gradient's convolution of a forward geometry g: over dz's (F, OH, OW) images, padded
  /// 2 − pad, into (H, W).
  static ConvGeometry dx_geometry(const ConvGeometry& g, size_t filters) noexcept;
  /// The GEMMs (one a plane, 36 calls) a forward pass, and the input gradient, over `batch` images
  /// run on `rt` (with their padding), for tuning.
  static GemmShape gemm_shape(Runtime* rt, const ConvGeometry& g, size_t filters, size_t batch);
  static GemmShape dx_gemm_shape(Runtime* rt, const ConvGeometry& g, size_t filters, size_t batch);
  static GemmShape dw_gemm_shape(Runtime* rt, const ConvGeometry& g, size_t filters, size_t batch);

  /// Fetches the kernels once; launches reuse them.
  explicit ConvWinogradOps(Runtime& rt);
  /// y:(batch, F, OH·OW) = act(W ⊛ x + bias[f]) for x:(batch, C·H·W), W:(F, C·3·3) at stride 1 (any
  /// padding in g); for gelu (activation_keeps_input) z, shaped as y, gets the value before the
  /// activation (required then). Its scratch (U, V, M: 36 planes each) grows on first use.
  void forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, const ConvGeometry& g,
               Activation act, Tensor* z = nullptr);
  /// forward's convolution under a MaxPool2D of 2×2 windows moved by 2, pooled in the output stage
  /// (conv_winograd.cl's winograd_output_rows_pooled_*): pooled:(batch, F·(OH / 2)·(OW / 2)) and arg
  /// (i32, as MaxPoolOp::forward's: the first maximum's index in y's plane), y not written. Only where
  /// pools_output(); not for gelu.
  void forward_pooled(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& pooled, Tensor& arg,
                      const ConvGeometry& g, Activation act);
  /// Whether forward_pooled runs here: the row forms' drivers.
  bool pools_output() const { return rows(); }
  /// dx:(batch, C·H·W) = ∂L/∂x from dz:(F, batch·OH·OW) (the gradient at the layer's pre-activation,
  /// channel-major, as Conv2D's backward pass holds it) and W:(F, C·3·3). Shares forward's scratch.
  void backward_dx(const Tensor& dz, const Tensor& w, Tensor& dx, const ConvGeometry& g, size_t batch);
  /// dW:(F, C·3·3) = ∂L/∂W from dz as backward_dx takes it and the forward pass's x:(batch, C·H·W)
  /// (db is the caller's). Its scratch (D, X, S) is its own.
  void backward_dw(const Tensor& dz, const Tensor& x, Tensor& dw, const ConvGeometry& g, size_t batch);
  /// Floats of scratch the forward pass, the input gradient (they share it) and the weight gradient over
  /// `batch` images use on `rt` (for activation estimates).
  static size_t scratch_floats(Runtime* rt, const ConvGeometry& g, size_t filters, size_t batch);

 private:
  struct Layout {
    size_t tiles_h, tiles_w, tiles;  // T = batch·tiles per image
    size_t fp, tp;                   // F and T padded as gemm_padding asks
    size_t v_plane, m_plane;         // V's and M's plane strides: C·tp and fp·tp, then a cache line more
  };
  static Layout layout(Runtime* rt, const ConvGeometry& g, size_t filters, size_t batch);
  // The weight gradient (conv_winograd.cl: F(4, 3) along x, the kernel rows along the GEMM's n): per plane
  // (6) S = Dᵀ·X (F × 3C) or Xᵀ·D (3C × F), whichever CLBlast's tiles pad less, one strided-batched GEMM
  // over `slices` slices of `part` blocks (rows past the last block zero).
  static constexpr size_t kDwPlanes = 6;
  struct DwLayout {
    bool filters_first;  // S is F × 3C
    size_t fp, xp;       // F and 3C padded: whole GEMM tiles, whole float8 lanes
    size_t blocks, slices, part;
    size_t d_plane, x_plane, s_plane;  // plane strides of D (rows × fp), X (rows × xp), S (slices × fp·xp)
    size_t m() const { return filters_first ? fp : xp; }
    size_t n() const { return filters_first ? xp : fp; }
  };
  static DwLayout dw_layout(Runtime* rt, const ConvGeometry& g, size_t filters, size_t batch);
  // Either pass: the convolution of `x` (image (b, c) at x[b·batch_stride + c·channel_stride]) by the
  // 3×3 kernels at w[f·filter_stride + c·channel_stride] (turned where `flip`), plus bias, into y
  // (NCHW), with gelu's z.
  struct Operand {
    const Tensor& t;
    size_t batch_or_filter_stride, channel_stride;
  };
  struct PoolTarget {  // forward_pooled's outputs
    Tensor &pooled, &arg;
  };
  void run(const Operand& x, const Operand& w, bool flip, const Tensor& bias, Tensor& y,
           const ConvGeometry& g, size_t filters, size_t batch, Activation act, Tensor* z,
           const PoolTarget* pool = nullptr);
  // The row forms of the input and output stages on every CPU driver, not only Runtime::row_kernels'
  // (PoCL): on Intel's runtime they ran F(2×2, 3×3)'s stages of the reference CNN's conv 2 at 2.4 and
  // 4.1 ms against the 3-D forms' 3.3 and 13.4.
  bool rows() const { return rt_.row_kernels() || rt_.info().type == DeviceType::cpu; }
  Runtime& rt_;
  compute::kernel weights_;
  // The input and output stages by range: [0] 3-D over the tiles, [1] one work-item per row of tiles,
  // which every CPU driver runs (Runtime::row_kernels' and Intel's); the output's also by Activation.
  std::array<compute::kernel, 2> input_;
  std::array<std::array<compute::kernel, 7>, 2> output_;
  std::array<compute::kernel, 6> output_pooled_;  // the row form under a 2×2 pool, by Activation but gelu
  Tensor u_, v_, m_;                              // U, V, M: 36 planes each, for either pass
  Tensor zeros_;                                  // the input gradient's bias
  compute::kernel dw_dz_, dw_input_, dw_output_;
  Tensor dw_d_, dw_x_, dw_s_;  // the weight gradient's D, X and S
};

}  // namespace anycl
