// Plain-loop inverted dropout (cl_kernels/dropout.cl): the mask comes from the host Philox, so
// it must equal the device's bit for bit.
#pragma once

#include <cstddef>
#include <cstdint>

#include "ops/dropout.hpp"  // private (src/): DropoutMask
#include "reference/philox.hpp"

namespace anycl::reference {

/// Elements whose 24 random bits are below rate·2^24 are dropped (the launcher truncates too).
inline uint32_t dropout_threshold(float rate) { return uint32_t(double(rate) * 16777216.0); }
inline float dropout_scale(float rate) { return 1.0f / (1.0f - rate); }

/// mask·scale for element (r, c) of a (·, cols) tensor: 0 or 1/(1−rate).
inline float dropout_factor(const DropoutMask& m, size_t r, size_t c, size_t cols) {
  const uint32_t index = uint32_t((m.row_base + r) * cols + c);
  return dropout_bits24(m.seed, m.step, m.stream, index) >= dropout_threshold(m.rate) ? dropout_scale(m.rate)
                                                                                      : 0.0f;
}

/// y = x·mask·scale.  x,y:(rows,cols); may alias.
inline void dropout_forward(const float* x, float* y, size_t rows, size_t cols, const DropoutMask& m) {
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c) y[r * cols + c] = x[r * cols + c] * dropout_factor(m, r, c, cols);
}

/// dy ← dy·mask·scale (the same diagonal map as forward).  dy:(rows,cols)
inline void dropout_backward(float* dy, size_t rows, size_t cols, const DropoutMask& m) {
  dropout_forward(dy, dy, rows, cols, m);
}

}  // namespace anycl::reference
