// Plain-loop weight initialisation (cl_kernels/init.cl) from the host Philox: bit-identical to
// the device for the same seed and stream.
#pragma once

#include <anycl/nn/init.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>

#include "reference/philox.hpp"

namespace anycl::reference {

/// Keras' uniform limits: Glorot √(6/(fan_in+fan_out)), He √(6/fan_in).
inline float init_limit(Init init, size_t fan_in, size_t fan_out) {
  const double fans = init == Init::he_uniform ? double(fan_in) : double(fan_in + fan_out);
  return float(std::sqrt(6.0 / fans));
}

/// w[i] = (2u−1)·limit, u = uniform01(seed, step 0, stream, i).  w:(n) (any shape, flat)
inline void uniform_init(float* w, size_t n, float limit, uint64_t seed, uint32_t stream) {
  for (size_t i = 0; i < n; ++i) w[i] = (2.0f * uniform01(seed, 0, stream, uint32_t(i)) - 1.0f) * limit;
}

}  // namespace anycl::reference
