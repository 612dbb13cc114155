// Pooling over NCHW planes (cl_kernels/pool.cl): max pooling with the argmax kept for the backward
// pass, average pooling, and global average / max pooling (one value per plane).
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

class AvgPoolOp {
 public:
  /// Fetches the kernels once; launches reuse them.
  explicit AvgPoolOp(Runtime& rt);
  /// y:(batch, C, OH, OW) = window means of x:(batch, C·H·W).
  void forward(const Tensor& x, Tensor& y, const PoolGeometry& g);
  /// dx:(batch, C·H·W) = Σ dy / size² over the windows covering each pixel.
  void backward(const Tensor& dy, Tensor& dx, const PoolGeometry& g);

 private:
  Runtime& rt_;
  compute::kernel forward_, backward_;
};

class GlobalPoolOp {
 public:
  /// Fetches the kernels once; `max`: GlobalMaxPooling2D, else GlobalAveragePooling2D.
  GlobalPoolOp(Runtime& rt, bool max);
  /// y:(batch, C) = each plane's mean or maximum of x:(batch, C·plane_size); arg (i32, ≥ y's size):
  /// the maximum's position in its plane (max only; untouched for the mean).
  void forward(const Tensor& x, Tensor& y, Tensor& arg, size_t plane_size);
  /// dx:(batch, C·plane_size) = dy spread evenly (mean) or routed to the maximum (max).
  void backward(const Tensor& dy, const Tensor& arg, Tensor& dx, size_t plane_size);

 private:
  Runtime& rt_;
  bool max_;
  compute::kernel forward_, backward_;
};

}  // namespace anycl
