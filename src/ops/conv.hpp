// Convolution as whole-batch GEMMs over NCHW tensors (cl_kernels/conv.cl): im2col into a
// channel-major column matrix col:(C·K·K, batch·OH·OW), its adjoint col2im, and the output stage
// that turns the channel-major GEMM result cf:(F, batch·OH·OW) into NCHW with bias and activation,
// and back. The GEMMs themselves are CLBlast's: one per pass for the whole batch.
#pragma once

#include <array>
#include <cstddef>

#include "activation.hpp"
#include "anycl/nn/geometry.hpp"
#include "anycl/tensor.hpp"
#include "runtime/runtime_impl.hpp"

namespace anycl {

class ConvOps {
 public:
  /// Fetches the kernels once; launches reuse them.
  explicit ConvOps(Runtime& rt);
  /// col:(C·K·K, batch·OH·OW), column b·OH·OW + p, from x:(batch, C·H·W); zeros where a window
  /// leaves the image.
  void im2col(const Tensor& x, Tensor& col, const ConvGeometry& g);
  /// colt:(batch·OH·OW, ld): row b·OH·OW + p is pixel p's patch in tap-major order (i, j, c) — colᵀ
  /// with its columns permuted — and the row's floats past C·K·K are left as they are. Goes through
  /// x in channels-last order in xt (≥ x's size), where each tap row of a patch is one run.
  void im2row(const Tensor& x, Tensor& xt, Tensor& colt, const ConvGeometry& g, size_t ld);
  /// rows:(count, ld) = dcfᵀ for the channel-major dcf:(filters, count), zeros after the filters.
  void dz_rows(const Tensor& dcf, Tensor& rows, size_t count, size_t filters, size_t ld);
  /// dw:(filters, cols) = Σ_s parts[s] (in order), parts[s] at s·slice_stride with rows of ld, their
  /// columns in im2row's tap-major order over `channels`, dw's in W's (c, i, j) order; with `db`
  /// (filters) also db = Σ_s of parts[s]'s column `cols` (ld > cols).
  void sum_slices(const Tensor& parts, size_t slices, size_t slice_stride, size_t ld, Tensor& dw,
                  size_t channels, Tensor* db = nullptr);
  /// t[r·ld + col] = value for the rows r < rows (a column of a row-major matrix in a flat tensor).
  void fill_column(Tensor& t, size_t rows, size_t ld, size_t col, float value);
  /// dx:(batch, C·H·W) = the adjoint of im2col applied to dcol (gathered: deterministic).
  void col2im(const Tensor& dcol, Tensor& dx, const ConvGeometry& g);
  /// y:(batch, F, OH·OW) = act(cf + bias[f]) for the channel-major cf:(F, batch·OH·OW); for gelu
  /// (activation_keeps_input) z, shaped as y, gets cf + bias[f] before the activation (required then).
  void output_forward(const Tensor& cf, Tensor& y, const Tensor& bias, const ConvGeometry& g, Activation act,
                      Tensor* z = nullptr);
  /// The backward of output_forward: dcf:(F, batch·OH·OW) = dy·act'(y) reordered channel-major,
  /// and with sum_bias dbias[f] = Σ of channel f (a fixed-order reduction: deterministic; from the
  /// rows' sums the row kernels write as they go, else a pass over dcf; dbias gives the filter count
  /// either way). y, dy:(batch, F, OH·OW).
  void output_backward(const Tensor& y, const Tensor& dy, Tensor& dcf, Tensor& dbias, const ConvGeometry& g,
                       Activation act, bool sum_bias = true);
  /// output_backward under a MaxPool2D of `pool` × `pool` windows moved by `pool` (conv_pool.cl): dcf as
  /// output_backward gives for the gradient the pool's backward would route from dy_pool, in one pass, from
  /// the pool's output `pooled` and argmax `arg` (i32) (its forward's); pooled, dy_pool:(batch, F·(OH /
  /// pool)· (OW / pool)), in any shape of those rows and columns. Not for gelu; only where
  /// pools_in_output_stage().
  void pooled_output_backward(const Tensor& pooled, const Tensor& arg, const Tensor& dy_pool, Tensor& dcf,
                              Tensor& dbias, const ConvGeometry& g, size_t pool, Activation act,
                              bool sum_bias = true);
  /// Whether pooled_output_backward runs here: on the drivers whose output_backward runs a work-item a row.
  bool pools_in_output_stage() const { return backward_rows(); }

 private:
  Runtime& rt_;
  size_t lanes_ = 256;  // bias_backward's work-group (one per channel); set before the kernels below
  compute::kernel im2col_, im2col_rows_, channels_last_, im2row_, im2row_rows_, col2im_, col2im_rows_,
      bias_backward_, dz_rows_, sum_slices_, fill_column_, bias_from_rows_;
  Tensor row_sums_;  // the row kernels' output_backward: each (b, f) row's sum, for dbias
  // The output stage's kernels by range and activation (anycl::Activation's value): [0] over a 2-D
  // range (x over the plane, y over the rows b·F + f); [1] the forward's over a 3-D one (y over the
  // filters, z over the batch), which PoCL's CPU driver (Runtime::row_kernels) runs, and the
  // backward's one work-item per row b·F + f (backward_rows) (conv.cl).
  std::array<std::array<compute::kernel, 7>, 2> output_forward_, output_backward_;  // per Activation
  std::array<compute::kernel, 6> output_backward_pooled_;  // per Activation but gelu (conv_pool.cl)
  void sum_bias_from_rows(size_t batch, Tensor& dbias);
  void launch_output_stage(compute::kernel& k, size_t plane, size_t filters, size_t batch);
  // output_backward's row form on every CPU driver, not only Runtime::row_kernels' (PoCL): Intel's
  // runtime ran the reference CNN's conv 2 in 1.4 ms so, with dbias from its row sums in 0.02, against
  // 2.1 over the 2-D range and 2.5 for conv_bias_backward.
  bool backward_rows() const { return rt_.row_kernels() || rt_.info().type == DeviceType::cpu; }
};

}  // namespace anycl
