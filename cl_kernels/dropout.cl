// Inverted dropout with a counter-based mask: element i (= (row_base + row)·cols + col) of step
// `step` is kept when its 24 random bits reach `threshold` = rate·2^24, so the mask is the same on
// every device. One Philox4x32-10 call gives four elements their bits: in each block of 64
// elements, element 16w + j takes word w of the call at counter (16·(i / 64) + j, step, stream, 1)
// (on PoCL's AVX2 class, 128x512 took 0.05 ms instead of 0.12-0.16 with one call per element). The
// training forward also stores the mask, a byte per element, for the backward pass to read back
// (dropout_backward_kept: a tenth of regenerating it); dropout_backward regenerates it. Kept
// elements are scaled by 1/(1-rate). The counter uses the sample's global position, so a shard of
// a batch sees the same mask as the whole batch would.

static inline float keep_scale(const uint seed_lo, const uint seed_hi, const uint step, const uint stream,
                              const uint index, const uint threshold, const float scale) {
  const uint4 words = philox4x32(((index >> 6) << 4) | (index & 15u), step, stream, 1u, seed_lo, seed_hi);
  const uint w = (index >> 4) & 3u;
  uint bits = words.x;  // an if chain: Oclgrind 21.10 evaluated the same choice as nested ?: wrongly
  if (w == 1) bits = words.y;
  if (w == 2) bits = words.z;
  if (w == 3) bits = words.w;
  return (bits >> 8) >= threshold ? scale : 0.0f;
}

// y[i] = x[i]·mask·scale for sixteen elements from i0, keep[i] = 1 or 0 where `keep` is given.
static inline void store16(__global const float* x, __global float* y, __global uchar* keep, const size_t i0,
                           const uint16 words, const uint threshold, const float scale) {
  const float16 factor = select((float16)(0.0f), (float16)(scale), (words >> 8) >= threshold);
  vstore16(vload16(0, x + i0) * factor, 0, y + i0);
  if (keep) vstore16(convert_uchar16(factor != 0.0f) & (uchar16)(1), 0, keep + i0);
}

// y = x·mask·scale and keep = mask for the 64 elements from i0 (x and y already offset; they may be
// the same memory): the body of the kernels below. A block of the mask runs sixteen Philox calls in
// 16-lane vectors, each product one 32x32->64-bit multiply; word w of all sixteen is the mask of the
// block's elements 16w to 16w + 15, so no word moves between lanes. The last partial 64, and 64 that
// are not one block of the mask (a row base times cols not a multiple of 64), go element by element.
static inline void apply_mask64(__global const float* x, __global float* y, __global uchar* keep,
                                const size_t i0, const uint n, const uint first, const uint threshold,
                                const float scale, const uint seed_lo, const uint seed_hi, const uint step,
                                const uint stream) {
  if (i0 + 64 <= n && (first & 63u) == 0) {
    uint16 c0 = ((first >> 6) << 4) + (uint16)(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    uint16 c1 = (uint16)(step), c2 = (uint16)(stream), c3 = (uint16)(1u);
    uint k0 = seed_lo, k1 = seed_hi;
#pragma unroll
    for (int round = 0; round < 10; ++round) {
      const ulong16 p0 = convert_ulong16(c0) * 0xD2511F53ul, p1 = convert_ulong16(c2) * 0xCD9E8D57ul;
      c0 = convert_uint16(p1 >> 32) ^ c1 ^ k0;
      c1 = convert_uint16(p1);
      c2 = convert_uint16(p0 >> 32) ^ c3 ^ k1;
      c3 = convert_uint16(p0);
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    store16(x, y, keep, i0, c0, threshold, scale);
    store16(x, y, keep, i0 + 16, c1, threshold, scale);
    store16(x, y, keep, i0 + 32, c2, threshold, scale);
    store16(x, y, keep, i0 + 48, c3, threshold, scale);
    return;
  }
  const uint count = min(64u, n - (uint)i0);
  for (uint k = 0; k < count; ++k) {
    const float factor = keep_scale(seed_lo, seed_hi, step, stream, first + k, threshold, scale);
    y[i0 + k] = x[i0 + k] * factor;
    if (keep) keep[i0 + k] = factor != 0.0f ? 1 : 0;
  }
}

// The elements of one work-item from i0: 64 on a CPU runtime (apply_mask64), one on a GPU
// (-DMASK_PER_ITEM=1, the launcher's choice): each lane its own element and its own Philox call, so
// a warp's loads and stores are consecutive (the H200 took 0.014 ms for 128x512 with 64 a lane, its
// 1,024 work-items too few to fill 132 units). keep_scale is the same function of the element's
// counter as apply_mask64's blocks, so both give the same bits.
#ifndef MASK_PER_ITEM
#define MASK_PER_ITEM 64
#endif
#if MASK_PER_ITEM != 64 && MASK_PER_ITEM != 1
#error "dropout.cl: MASK_PER_ITEM must be 64 or 1"
#endif
static inline void apply_mask(__global const float* x, __global float* y, __global uchar* keep, const size_t i0,
                              const uint n, const uint first, const uint threshold, const float scale,
                              const uint seed_lo, const uint seed_hi, const uint step, const uint stream) {
#if MASK_PER_ITEM == 1
  const float factor = keep_scale(seed_lo, seed_hi, step, stream, first, threshold, scale);
  y[i0] = x[i0] * factor;
  if (keep) keep[i0] = factor != 0.0f ? 1 : 0;
#else
  apply_mask64(x, y, keep, i0, n, first, threshold, scale, seed_lo, seed_hi, step, stream);
#endif
}

// y = x·mask·scale; x and y may be the same buffer (then the same offset).
__kernel void dropout_forward(__global const float* x, const uint x_off, __global float* y, const uint y_off,
                              const uint n, const uint cols, const uint row_base, const uint threshold,
                              const float scale, const uint seed_lo, const uint seed_hi, const uint step,
                              const uint stream) {
  const size_t i0 = MASK_PER_ITEM * get_global_id(0);  // 64-bit addresses; the RNG counter stays 32-bit
  if (i0 >= n) return;
  const uint first = row_base * cols + (uint)i0;  // = (row_base + row)·cols + col, mod 2^32
  apply_mask(x + x_off, y + y_off, 0, i0, n, first, threshold, scale, seed_lo, seed_hi, step, stream);
}

// The same, storing the mask: keep[i] = 1 where element i is kept, 0 where dropped.
__kernel void dropout_forward_keep(__global const float* x, const uint x_off, __global float* y, const uint y_off,
                                   __global uchar* keep, const uint keep_off, const uint n, const uint cols,
                                   const uint row_base, const uint threshold, const float scale,
                                   const uint seed_lo, const uint seed_hi, const uint step, const uint stream) {
  const size_t i0 = MASK_PER_ITEM * get_global_id(0);
  if (i0 >= n) return;
  const uint first = row_base * cols + (uint)i0;
  apply_mask(x + x_off, y + y_off, keep + keep_off, i0, n, first, threshold, scale, seed_lo, seed_hi, step,
             stream);
}

// A Dense layer's bias and activation with the Dropout after it, in one launch: y = act(y + bias)
// in place (the layer's own output, which its backward reads), then out = y·mask·scale and keep =
// mask, as bias_activation_forward and dropout_forward_keep give them one after the other (each
// work-item's 64 elements, written then read back by the same work-item). y:(rows, cols) at y_off,
// out at out_off, keep at keep_off, bias:(cols) at bias_off.
__kernel void bias_activation_dropout_forward(__global float* y, const uint y_off, __global const float* bias,
                                              const uint bias_off, const uint rows, const uint cols,
                                              const int act, __global float* out, const uint out_off,
                                              __global uchar* keep, const uint keep_off, const uint row_base,
                                              const uint threshold, const float scale, const uint seed_lo,
                                              const uint seed_hi, const uint step, const uint stream) {
  const size_t i0 = MASK_PER_ITEM * get_global_id(0), n = (size_t)rows * cols;
  if (i0 >= n) return;
#if MASK_PER_ITEM == 1
  y[y_off + i0] = activate(y[y_off + i0] + bias[bias_off + i0 % cols], act);  // common.cl
#else
  for (size_t i = i0; i < i0 + 64 && i < n; i += 16) bias_activation16(y + y_off, bias + bias_off, i, n, cols, act);
#endif
  const uint first = row_base * cols + (uint)i0;
  apply_mask(y + y_off, out + out_off, keep + keep_off, i0, (uint)n, first, threshold, scale, seed_lo, seed_hi, step,
             stream);
}

// dx = dy·mask·scale, in place, the mask regenerated.
__kernel void dropout_backward(__global float* dy, const uint dy_off, const uint n, const uint cols,
                               const uint row_base, const uint threshold, const float scale, const uint seed_lo,
                               const uint seed_hi, const uint step, const uint stream) {
  const size_t i0 = MASK_PER_ITEM * get_global_id(0);  // 64-bit addresses; the RNG counter stays 32-bit
  if (i0 >= n) return;
  const uint first = row_base * cols + (uint)i0;  // = (row_base + row)·cols + col, mod 2^32
  apply_mask(dy + dy_off, dy + dy_off, 0, i0, n, first, threshold, scale, seed_lo, seed_hi, step, stream);
}

// dx = dy·mask·scale, in place, the mask read from what dropout_forward_keep stored.
__kernel void dropout_backward_kept(__global float* dy, const uint dy_off, __global const uchar* keep,
                                    const uint keep_off, const uint n, const float scale) {
  const size_t i0 = 16 * get_global_id(0);
  if (i0 >= n) return;
  __global float* d = dy + dy_off;
  __global const uchar* k = keep + keep_off;
  if (i0 + 16 <= n) {
    const float16 factor = select((float16)(0.0f), (float16)(scale), convert_int16(vload16(0, k + i0)) != 0);
    vstore16(vload16(0, d + i0) * factor, 0, d + i0);
    return;
  }
  for (size_t i = i0; i < n; ++i) d[i] *= k[i] ? scale : 0.0f;
}
