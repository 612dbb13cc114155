// Inverted dropout with a counter-based mask: element (row, col) of step `step` is kept when
// its 24 random bits reach `threshold` = rate·2^24, so the mask is the same on every device and
// the backward pass regenerates it instead of storing it. Kept elements are scaled by 1/(1-rate).
// The counter uses the sample's global position (row_base + row), so a shard of a batch sees
// the same mask as the whole batch would.

static inline float keep_scale(const uint seed_lo, const uint seed_hi, const uint step, const uint stream,
                        const uint index, const uint threshold, const float scale) {
  return random_bits24(seed_lo, seed_hi, step, stream, index) >= threshold ? scale : 0.0f;
}

// y = x·mask·scale; x and y may be the same buffer (then the same offset).
__kernel void dropout_forward(__global const float* x, const uint x_off, __global float* y, const uint y_off,
                              const uint n, const uint cols, const uint row_base, const uint threshold,
                              const float scale, const uint seed_lo, const uint seed_hi, const uint step,
                              const uint stream) {
  const size_t i = get_global_id(0);  // 64-bit addresses; the RNG counter stays 32-bit
  if (i >= n) return;
  const uint index = row_base * cols + (uint)i;  // = (row_base + row)·cols + col, mod 2^32
  y[y_off + i] = x[x_off + i] * keep_scale(seed_lo, seed_hi, step, stream, index, threshold, scale);
}

// dx = dy·mask·scale, in place.
__kernel void dropout_backward(__global float* dy, const uint dy_off, const uint n, const uint cols,
                               const uint row_base, const uint threshold, const float scale, const uint seed_lo,
                               const uint seed_hi, const uint step, const uint stream) {
  const size_t i = get_global_id(0);  // 64-bit addresses; the RNG counter stays 32-bit
  if (i >= n) return;
  const uint index = row_base * cols + (uint)i;  // = (row_base + row)·cols + col, mod 2^32
  dy[dy_off + i] *= keep_scale(seed_lo, seed_hi, step, stream, index, threshold, scale);
}
