// Direct convolution (cl_kernels/conv_direct.cl) for a layer whose patch C·K·K is too short for a
// GEMM to pay: the forward pass from x and W with the bias and activation, and the weight and bias
// gradients from the channel-major dz — no column matrix, no GEMM. Conv2D chooses it
// (Conv2D::uses_direct); dx stays the GEMM's (ConvOps).
#pragma once

#include <array>
#include <cstddef>

#include "activation.hpp"
#include "anycl/nn/geometry.hpp"
#include "anycl/tensor.hpp"
#include "runtime/runtime_impl.hpp"

namespace anycl {

class ConvDirectOps {
 public:
  /// Fetches the kernels once; launches reuse them.
  explicit ConvDirectOps(Runtime& rt);
  /// y:(batch, F, OH·OW) = act(W ⊛ x + bias[f]) for x:(batch, C·H·W), W:(F, C·K·K); for gelu
  /// (activation_keeps_input) z, shaped as y, gets the value before the activation (required then).
  void forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, const ConvGeometry& g,
               Activation act, Tensor* z = nullptr);
  /// dw:(F, C·K·K) = Σ over the batch and output pixels of dz·x's window, db:(F) = Σ dz, from the
  /// channel-major dz:(F, batch·OH·OW) (conv_output_backward's) and x:(batch, C·H·W); fixed-order
  /// sums (deterministic).
  void weight_grad(const Tensor& dz, const Tensor& x, Tensor& dw, Tensor& db, const ConvGeometry& g);

 private:
  Runtime& rt_;
  size_t lanes_ = 256;  // weight_grad's work-group (one per weight); set before the kernels below
  compute::kernel weight_grad_;
  // The forward kernels by range and activation (anycl::Activation's value): [0] over a 3-D range,
  // [1] one work-item per output row, which every CPU driver runs (rows()).
  std::array<std::array<compute::kernel, 7>, 2> forward_;
  // The row form on every CPU driver, not only Runtime::row_kernels' (PoCL): Intel's runtime ran the
  // reference CNN's conv 1 in 4.8 ms so against 11.1 over the 3-D range (as ConvWinogradOps::rows).
  bool rows() const { return rt_.row_kernels() || rt_.info().type == DeviceType::cpu; }
};

}  // namespace anycl
