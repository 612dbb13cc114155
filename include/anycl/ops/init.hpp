// Weight initialisation from the counter-based RNG (cl_kernels/init.cl): a seed gives the same
// weights on every device.
#pragma once

#include <cstdint>

#include "anycl/tensor.hpp"

namespace anycl {

enum class Init { glorot_uniform, he_uniform };

/// Parses "glorot_uniform" / "he_uniform"; throws ValidationError otherwise.
Init parse_init(const std::string& name);
/// "glorot_uniform" or "he_uniform".
const char* to_string(Init init) noexcept;

/// The uniform limit of `init` for a (fan_in, fan_out) weight: √(6/(in+out)) (Glorot, as Keras'
/// default) or √(6/in) (He).
float init_limit(Init init, size_t fan_in, size_t fan_out);

/// w[i] = (2u−1)·limit, u = uniform01(seed, step 0, stream, i). Enqueued, no wait.
void uniform_init(Runtime& rt, Tensor& w, float limit, uint64_t seed, uint32_t stream);

}  // namespace anycl
