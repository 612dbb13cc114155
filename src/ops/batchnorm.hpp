// Batch normalisation's launchers (cl_kernels/batchnorm.cl) over (batch, channels, plane)
// activations: per feature after Dense (plane 1), per channel of NCHW after Conv2D; the layer's
// activation fused into the normalisation (forward) and its gradient into the backward.
#pragma once

#include "anycl/nn/activation.hpp"
#include "anycl/tensor.hpp"
#include "runtime/runtime_impl.hpp"

namespace anycl {

/// Where a batch-norm launch finds its per-channel arrays: each a tensor and an offset in floats.
/// stats: mean at [0, C), variance at [C, 2C); params: γ then β; grads: dγ then dβ.
struct BatchNormShape {
  size_t batch = 0, channels = 0, plane = 1;
  size_t size() const { return batch * channels * plane; }
};

class BatchNormOp {
 public:
  /// Fetches the kernels once, compiled for `act` and the runtime's row_kernels() (the reductions'
  /// work-group size fitted to the device). A training step runs two launches a direction: the per-channel
  /// reduction, then the element pass.
  BatchNormOp(Runtime& rt, Activation act);

  /// Training: batch mean and biased variance of x into stats (2C floats); with `moving` (2C), also
  /// moving = moving·momentum + batch·(1 − momentum); then y = act((x − mean)·γ/sqrt(var + ε) + β).
  void train_forward(const Tensor& x, Tensor& y, const BatchNormShape& s, Tensor& stats, Tensor* moving,
                     float momentum, const Tensor& params, float epsilon);
  /// y = act((x − mean)·γ/sqrt(var + ε) + β) with mean/var from `stats` (2C) and γ/β from `params` (2C).
  void forward(const Tensor& x, Tensor& y, const BatchNormShape& s, const Tensor& stats, const Tensor& params,
               float epsilon);
  /// The training-mode backward (act' from z recomputed from x): grads (2C) ← (dγ, dβ); with dx,
  /// dx ← the input gradient (dx may be dy).
  void backward(const Tensor& x, const Tensor& dy, const BatchNormShape& s, const Tensor& stats,
                const Tensor& params, float epsilon, Tensor& grads, Tensor* dx);

 private:
  void launch_elements(compute::kernel& k, const BatchNormShape& s);

  Runtime& rt_;
  size_t group_ = 0, group_sums_ = 0;
  compute::kernel stats_, forward_, sums_, dx_;
};

}  // namespace anycl
