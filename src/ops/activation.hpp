// Bias + activation fused forward and backward (cl_kernels/activation.cl).
#pragma once

#include "anycl/nn/activation.hpp"
#include "anycl/tensor.hpp"
#include "runtime/runtime_impl.hpp"

namespace anycl {

class BiasActivation {
 public:
  /// Fetches the kernels once; launches reuse them.
  explicit BiasActivation(Runtime& rt);
  /// y = act(y + bias), in place; z (same shape), when given, gets y + bias before the activation
  /// (what a gelu layer keeps for its backward).  y:(rows,cols) bias:(cols)
  void forward(Tensor& y, const Tensor& bias, Activation act, Tensor* z = nullptr);
  /// dy ← dy·act'(y) in place (act' taken from the output y — for gelu, activation_keeps_input(),
  /// pass the kept z as y); dbias = Σ_rows of the result.  y,dy:(rows,cols) dbias:(cols)
  void backward(const Tensor& y, Tensor& dy, Tensor& dbias, Activation act);
  /// The same with a dropout's backward fused in: dy ← dy·mask·scale first, the mask (a byte per
  /// element, 1 kept) read from `keep` at `keep_offset`, as DropoutOp::backward_kept gives it.
  void backward_dropped(const Tensor& y, Tensor& dy, const DeviceBuffer& keep, size_t keep_offset,
                        float scale, Tensor& dbias, Activation act);
  /// y = act(x·w + bias) for one row x, fused (inference at batch 1: no GEMM tile of padding rows).
  /// The same bits as a GEMM followed by forward(). x:(1,k) w:(k,cols) bias:(cols) y:(1,cols)
  void forward_row(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y, Activation act);
  /// Per channel over NCHW (convolutions): y:(batch, F·plane), bias:(F); y = act(y + bias[f]).
  /// (Its backward, which also reorders for the weight GEMMs, is ConvOps::output_backward.)
  /// z as in forward().
  void forward_channels(Tensor& y, const Tensor& bias, size_t plane, Activation act, Tensor* z = nullptr);

 private:
  Runtime& rt_;
  compute::kernel forward_, backward_, backward_dropped_, channel_forward_, row_forward_;
  // The backward kernels as runs of eight columns a work-item, where Runtime::row_kernels (PoCL) was
  // on at construction: 0.04–0.05 ms for the reference MLP's 128×512 on Zen 4 against 0.16–0.19.
  compute::kernel backward_runs_, backward_dropped_runs_;
  bool runs_ = rt_.row_kernels();
  size_t columns_ = 8, lanes_ = 16;  // the backward kernel's work-group: columns × row lanes
};

}  // namespace anycl
