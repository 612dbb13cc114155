// Weight initialisation from the counter-based RNG (cl_kernels/init.cl): a seed gives the same
// weights on every device.
#pragma once

#include <cstdint>

#include "anycl/nn/init.hpp"
#include "anycl/tensor.hpp"

namespace anycl {

/// w[i] = (2u−1)·limit, u = uniform01(seed, step 0, stream, i). Enqueued, no wait.
void uniform_init(Runtime& rt, Tensor& w, float limit, uint64_t seed, uint32_t stream);

}  // namespace anycl
