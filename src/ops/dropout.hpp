// Inverted dropout with a counter-based (Philox) mask: the same mask on every device. The backward
// pass reads back the mask its forward stored (a byte per element) or regenerates it
// (cl_kernels/dropout.cl).
#pragma once

#include <cstdint>

#include "anycl/nn/activation.hpp"
#include "anycl/tensor.hpp"
#include "runtime/runtime_impl.hpp"

namespace anycl {

/// Which mask: element (r, c) is dropped with probability `rate`, decided by (seed, step,
/// stream, (row_base + r)·cols + c).
struct DropoutMask {
  float rate = 0.f;  // in [0, 1)
  uint64_t seed = 0;
  uint32_t step = 0;      // the training step: a new mask every step
  uint32_t stream = 0;    // one stream per dropout layer
  uint32_t row_base = 0;  // global sample position of row 0 (data-parallel shards)
};

class DropoutOp {
 public:
  /// Fetches the kernels once; launches reuse them.
  explicit DropoutOp(Runtime& rt);
  /// y = x·mask/(1−rate).  x,y:(rows,cols), may be the same tensor. With `keep`, also
  /// keep[keep_offset + i] = 1 where element i is kept and 0 where dropped (x.size() bytes).
  void forward(const Tensor& x, Tensor& y, const DropoutMask& mask, DeviceBuffer* keep = nullptr,
               size_t keep_offset = 0);
  /// A Dense layer's output stage with this dropout after it, one launch: y = act(y + bias) in place,
  /// out = y·mask/(1−rate) and keep[keep_offset + i] = mask as forward() with `keep` stores it.
  /// y,out:(rows,cols) bias:(cols)
  void forward_bias_activation(Tensor& y, const Tensor& bias, Activation act, Tensor& out,
                               const DropoutMask& mask, DeviceBuffer& keep, size_t keep_offset = 0);
  /// dy ← dy·mask/(1−rate), in place, the mask regenerated.
  void backward(Tensor& dy, const DropoutMask& mask);
  /// dy ← dy·mask/(1−rate), in place, the mask read from what forward stored in `keep`.
  void backward_kept(Tensor& dy, const DeviceBuffer& keep, size_t keep_offset, float rate);

 private:
  Runtime& rt_;
  size_t per_item_;  // elements a work-item of the mask's kernels: 64 (CPU) or 1 (GPU)
  compute::kernel forward_, forward_keep_, forward_bias_activation_, backward_, backward_kept_;
};

}  // namespace anycl
