// The geometry of a convolution or a pooling window over NCHW images: what Conv2D and MaxPool2D
// derive from their input shape and their kernels (src/ops/conv.cpp, src/ops/pool.cpp) run with.
#pragma once

#include <cstddef>

namespace anycl {

/// One 2-D convolution's geometry (square kernel; padding may be larger at the bottom/right).
struct ConvGeometry {
  size_t channels = 1, height = 1, width = 1;  // input (C, H, W)
  size_t kernel = 1, stride = 1;               // KH = KW = kernel
  size_t pad_top = 0, pad_left = 0;            // zeros before the image; the rest is implied by out_*
  size_t out_h = 1, out_w = 1;
  /// C·K·K: rows of one sample's column matrix; OH·OW: its columns.
  size_t patch() const noexcept { return channels * kernel * kernel; }
  size_t plane() const noexcept { return out_h * out_w; }
};

/// A pooling window's geometry over (C, H, W) planes (valid windows only).
struct PoolGeometry {
  size_t channels = 1, height = 1, width = 1;
  size_t size = 2, stride = 2;
  size_t out_h = 1, out_w = 1;
};

}  // namespace anycl
