// Max pooling over NCHW planes with the argmax kept for the backward pass (cl_kernels/pool.cl).
#pragma once

#include <cstddef>

#include "anycl/nn/geometry.hpp"
#include "anycl/tensor.hpp"
#include "runtime/runtime_impl.hpp"

namespace anycl {

class MaxPoolOp {
 public:
  /// Fetches the kernels once; launches reuse them.
  explicit MaxPoolOp(Runtime& rt);
  /// y:(batch, C, OH, OW) = window maxima of x:(batch, C·H·W); arg (i32, ≥ y's size) = their positions.
  void forward(const Tensor& x, Tensor& y, Tensor& arg, const PoolGeometry& g);
  /// dx:(batch, C·H·W) = dy routed to the positions in arg (summed where windows overlap).
  void backward(const Tensor& dy, const Tensor& arg, Tensor& dx, const PoolGeometry& g);

 private:
  Runtime& rt_;
  compute::kernel forward_, backward_;
};

}  // namespace anycl
