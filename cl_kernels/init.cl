// Weight initialisation from the counter-based RNG, so a seed gives the same initial weights
// on every device: w[i] = (2u - 1)·limit with u uniform in [0, 1) (Glorot/He uniform).
__kernel void uniform_init(__global float* w, const uint offset, const uint n, const float limit,
                           const uint seed_lo, const uint seed_hi, const uint stream) {
  const size_t i = get_global_id(0);
  if (i >= n) return;
  const float u = uniform01(seed_lo, seed_hi, 0u, stream, (uint)i);
  w[offset + i] = (2.0f * u - 1.0f) * limit;
}

// x[offset + i] = value: zeroing biases, gradients and optimizer state (Tensor::fill).
__kernel void fill_value(__global float* x, const uint offset, const uint n, const float value) {
  const size_t i = get_global_id(0);
  if (i < n) x[offset + i] = value;
}
