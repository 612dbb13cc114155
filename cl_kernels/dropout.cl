// Inverted dropout with a counter-based mask: element `index` (= (row_base + row)·cols + col, mod
// 2^32) of step `step` is kept when its 24 random bits reach `threshold` = rate·2^24, so the mask is
// the same on every device and the backward pass regenerates it instead of storing it. Kept
// elements are scaled by 1/(1-rate). The counter uses the sample's global position, so a shard of a
// batch sees the same mask as the whole batch would.
//
// The bits of element `index` are output word index mod 4 of Philox4x32-10 at counter (index / 4,
// step, stream, 0): every word the generator makes is used, one round function per four elements
// (one per element, only the first word used, made dropout 5 % of a training step on PoCL's AVX2
// class; docs/benchmarks.md).

// The ten rounds of common.cl's Philox4x32-10 over words c0..c3 (scalars, or vectors of counters)
// with key k0, k1, all four words kept: a macro, so PoCL inlines and vectorises it (as a function
// taking pointers it was called, not inlined, and no faster than one counter per element).
#define PHILOX4X32_10(c0, c1, c2, c3, k0, k1, wide, narrow)                       \
  for (int round = 0; round < 10; ++round) {                                     \
    const wide p0 = convert_##wide(c0) * 0xD2511F53ul;                           \
    const wide p1 = convert_##wide(c2) * 0xCD9E8D57ul;                           \
    c0 = convert_##narrow(p1 >> 32) ^ c1 ^ k0;                                   \
    c1 = convert_##narrow(p1);                                                   \
    c2 = convert_##narrow(p0 >> 32) ^ c3 ^ k1;                                   \
    c3 = convert_##narrow(p0);                                                   \
    k0 += 0x9E3779B9u;                                                           \
    k1 += 0xBB67AE85u;                                                           \
  }

// The 24 random bits of one element (any index).
static inline uint dropout_bits24(uint k0, uint k1, const uint step, const uint stream, const uint index) {
  uint c0 = index >> 2, c1 = step, c2 = stream, c3 = 0u;
#pragma unroll
  PHILOX4X32_10(c0, c1, c2, c3, k0, k1, ulong, uint)
  const uint word = index & 3u;
  return (word == 0u ? c0 : word == 1u ? c1 : word == 2u ? c2 : c3) >> 8;
}

static inline float keep_scale(const uint seed_lo, const uint seed_hi, const uint step, const uint stream,
                              const uint index, const uint threshold, const float scale) {
  return dropout_bits24(seed_lo, seed_hi, step, stream, index) >= threshold ? scale : 0.0f;
}

// The factors of sixteen consecutive elements from `first`, a multiple of 4: the four words of four
// counters (computed with the 32-bit wrap, as element indices are).
static inline float16 keep_scale16(uint k0, uint k1, const uint step, const uint stream, const uint first,
                                   const uint threshold, const float scale) {
  uint4 c0 = (first + (uint4)(0u, 4u, 8u, 12u)) >> 2, c1 = (uint4)(step), c2 = (uint4)(stream),
        c3 = (uint4)(0u);
#pragma unroll
  PHILOX4X32_10(c0, c1, c2, c3, k0, k1, ulong4, uint4)
  const uint16 bits = (uint16)(c0.s0, c1.s0, c2.s0, c3.s0, c0.s1, c1.s1, c2.s1, c3.s1, c0.s2, c1.s2, c2.s2,
                               c3.s2, c0.s3, c1.s3, c2.s3, c3.s3) >> 8;
  return select((float16)(0.0f), (float16)(scale), bits >= threshold);
}

// Sixteen elements per work-item (vector loads, stores and Philox), element by element where they
// are the last partial sixteen or do not start at a multiple of 4 (a shard whose row_base·cols is
// not): on PoCL, 128x512 took 0.10 ms instead of 0.14 ms with one element per
// work-item (2 loaded vCPUs; bias_activation_forward 0.11 ms in both runs).

// y[i] = x[i]·mask·scale for the sixteen elements from i0 (x and y already offset; they may be the
// same memory): the body of both kernels below.
static inline void apply_mask16(__global const float* x, __global float* y, const size_t i0, const uint n,
                                const uint first, const uint threshold, const float scale, const uint seed_lo,
                                const uint seed_hi, const uint step, const uint stream) {
  if (i0 + 16 <= n && (first & 3u) == 0u) {
    const float16 keep = keep_scale16(seed_lo, seed_hi, step, stream, first, threshold, scale);
    vstore16(vload16(0, x + i0) * keep, 0, y + i0);
    return;
  }
  for (uint k = 0; k < min(16u, (uint)(n - i0)); ++k)
    y[i0 + k] = x[i0 + k] * keep_scale(seed_lo, seed_hi, step, stream, first + k, threshold, scale);
}

// y = x·mask·scale; x and y may be the same buffer (then the same offset).
__kernel void dropout_forward(__global const float* x, const uint x_off, __global float* y, const uint y_off,
                              const uint n, const uint cols, const uint row_base, const uint threshold,
                              const float scale, const uint seed_lo, const uint seed_hi, const uint step,
                              const uint stream) {
  const size_t i0 = 16 * get_global_id(0);  // 64-bit addresses; the RNG counter stays 32-bit
  if (i0 >= n) return;
  const uint first = row_base * cols + (uint)i0;  // = (row_base + row)·cols + col, mod 2^32
  apply_mask16(x + x_off, y + y_off, i0, n, first, threshold, scale, seed_lo, seed_hi, step, stream);
}

// dx = dy·mask·scale, in place.
__kernel void dropout_backward(__global float* dy, const uint dy_off, const uint n, const uint cols,
                               const uint row_base, const uint threshold, const float scale, const uint seed_lo,
                               const uint seed_hi, const uint step, const uint stream) {
  const size_t i0 = 16 * get_global_id(0);  // 64-bit addresses; the RNG counter stays 32-bit
  if (i0 >= n) return;
  const uint first = row_base * cols + (uint)i0;  // = (row_base + row)·cols + col, mod 2^32
  apply_mask16(dy + dy_off, dy + dy_off, i0, n, first, threshold, scale, seed_lo, seed_hi, step, stream);
}
