// Batch normalisation's launchers (cl_kernels/batchnorm.cl) over (batch, channels, plane)
// activations: per feature after Dense (plane 1), per channel of NCHW after Conv2D; the layer's
// activation fused into the normalisation (forward) and its gradient into the backward.
#pragma once

#include <memory>
#include <string>

#include "anycl/nn/activation.hpp"
#include "anycl/nn/geometry.hpp"
#include "anycl/tensor.hpp"
#include "runtime/runtime_impl.hpp"

namespace anycl {

/// Where a batch-norm launch finds its per-channel arrays: each a tensor and an offset in floats.
/// stats: mean at [0, C), variance at [C, 2C); params: γ then β; grads: dγ then dβ.
struct BatchNormShape {
  size_t batch = 0, channels = 0, plane = 1;
  size_t size() const { return batch * channels * plane; }
};

class BatchNormSplitReductions;  // batchnorm_split.hpp

namespace detail {
/// A reduction kernel of batchnorm.cl with `options` (-DBN_ACT, -DBN_ROWS) beside -DWG: as
/// single_group_kernel, its work-group (WG, a power of two) fitted to the device and the kernel.
compute::kernel batchnorm_group_kernel(Runtime& rt, const char* name, const std::string& options,
                                       size_t& work_group);
}  // namespace detail

class BatchNormOp {
 public:
  /// Fetches the kernels once, compiled for `act` and the runtime's row_kernels() (the reductions'
  /// work-group size fitted to the device), and the split reductions' where the runtime asks for them
  /// (RuntimeImpl::split_reductions: not on CPUs). A training step runs two launches a direction: the
  /// per-channel reduction (one group a channel), then the element pass; or three with the reduction
  /// split over several groups a channel and finished by a second launch.
  BatchNormOp(Runtime& rt, Activation act);
  ~BatchNormOp();

  /// Training: batch mean and biased variance of x into stats (2C floats); with `moving` (2C), also
  /// moving = moving·momentum + batch·(1 − momentum); then y = act((x − mean)·γ/sqrt(var + ε) + β).
  void train_forward(const Tensor& x, Tensor& y, const BatchNormShape& s, Tensor& stats, Tensor* moving,
                     float momentum, const Tensor& params, float epsilon);
  /// y = act((x − mean)·γ/sqrt(var + ε) + β) with mean/var from `stats` (2C) and γ/β from `params` (2C).
  void forward(const Tensor& x, Tensor& y, const BatchNormShape& s, const Tensor& stats, const Tensor& params,
               float epsilon);
  /// train_forward and forward under a MaxPool2D of windows of `pool` moved by `pool` over y: pooled
  /// (batch, channels·out_h·out_w) and arg (i32, at least as many) as MaxPoolOp::forward writes them, both
  /// at offset 0; y is not written. Only where pools_gradient(s.plane).
  void train_forward_pooled(const Tensor& x, Tensor& pooled, Tensor& arg, const BatchNormShape& s,
                            const PoolGeometry& pool, Tensor& stats, Tensor* moving, float momentum,
                            const Tensor& params, float epsilon);
  void forward_pooled(const Tensor& x, Tensor& pooled, Tensor& arg, const BatchNormShape& s,
                      const PoolGeometry& pool, const Tensor& stats, const Tensor& params, float epsilon);
  /// The training-mode backward (act' from z recomputed from x): grads (2C) ← (dγ, dβ); with dx,
  /// dx ← the input gradient (dx may be dy).
  void backward(const Tensor& x, const Tensor& dy, const BatchNormShape& s, const Tensor& stats,
                const Tensor& params, float epsilon, Tensor& grads, Tensor* dx);
  /// backward under a MaxPool2D of non-overlapping windows over y: the pool's gradient dyp and argmax arg
  /// (batch, channels·pooled each, arg i32 as MaxPoolOp::forward writes it) stand in for the full-size dy
  /// maxpool_backward would write; every element of dx is written. Only where pools_gradient(s.plane).
  void backward_pooled(const Tensor& x, const Tensor& dyp, const Tensor& arg, size_t pooled,
                       const BatchNormShape& s, const Tensor& stats, const Tensor& params, float epsilon,
                       Tensor& grads, Tensor* dx);
  /// Whether backward_pooled runs for planes of `plane` values: the row forms' drivers, a plane of 8 or more.
  bool pools_gradient(size_t plane) const { return dx_rows_pooled_.get() && plane >= 8; }

 private:
  /// The element pass `k`, or its row form `rows` where it exists and a plane has at least 8 values.
  void launch_elements(compute::kernel& k, compute::kernel& rows, const BatchNormShape& s);
  /// The *_pooled passes' argument checks (ValidationError with the reason).
  void check_pooled(const Tensor& x, const Tensor& pooled, const Tensor& arg, const BatchNormShape& s,
                    const PoolGeometry& pool) const;
  /// The batch's mean and biased variance into stats, folded into `moving` where given.
  void batch_statistics(const Tensor& x, const BatchNormShape& s, Tensor& stats, Tensor* moving,
                        float momentum);
  void one_group_sums(const Tensor& x, const Tensor& dy, const BatchNormShape& s, const Tensor& stats,
                      const Tensor& params, float epsilon, Tensor& grads);

  Runtime& rt_;
  size_t group_ = 0, group_sums_ = 0;
  compute::kernel stats_, forward_, sums_, dx_;
  compute::kernel forward_rows_, dx_rows_;                              // on row_kernels() runtimes only
  compute::kernel forward_rows_pooled_, sums_pooled_, dx_rows_pooled_;  // the same
  size_t group_sums_pooled_ = 0;
  std::unique_ptr<BatchNormSplitReductions> split_;  // null: one group a channel
};

}  // namespace anycl
