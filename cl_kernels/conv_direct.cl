// Direct convolution for a layer whose patch C·KH·KW is too short for a GEMM (the reference CNN's
// first layer: one channel, 3×3, so k = 9), where im2col + GEMM moved a 9-row column matrix and
// CLBlast padded k to its tile: conv 1 took 6.9 ms of forward and 14.3 ms of backward commands a
// step on PoCL (AVX-512), for 0.05 GFLOP each way. Here the forward pass computes y from x and W
// directly, and the weight gradient reduces dz·x per weight; dx (a deeper layer's) stays a GEMM.
// Shapes as conv.cl: x:(B,C,H,W); W:(F, C·KH·KW) in (c, i, j) order; y:(B,F,OH,OW); the
// channel-major dz:(F, B·OH·OW) of conv_output_backward.
// Both forward forms sum the taps in (c, i, j) order, then add the bias; every sum here is in a
// fixed order, so reruns are bit-identical.

// The columns [*lo, *hi) of an output row whose tap j reads inside the image: ox·s + j − pl in [0, width).
static inline void conv_direct_inside(const uint j, const uint width, const uint stride, const uint pad_left,
                                      const uint out_w, uint* lo, uint* hi) {
  *lo = min(out_w, j >= pad_left ? 0u : (pad_left - j + stride - 1) / stride);
  *hi = width + pad_left <= j ? 0u : max(*lo, min(out_w, (width + pad_left - j - 1) / stride + 1));
}

// One output element (b, f, oy, ox): act(Σ_(c,i,j) W[f][c,i,j]·x[b][c][oy·s+i−pt][ox·s+j−pl] + bias[f]);
// for gelu, z (laid out as y) gets the value before the activation.
static inline void conv_direct_forward(const size_t ox, const uint oy, const uint line,
                                       __global const float* x, const uint x_off, __global const float* w,
                                       const uint w_off, __global const float* bias, const uint bias_off,
                                       __global float* y, const uint y_off, __global float* z,
                                       const uint z_off, const uint batch, const uint channels,
                                       const uint height, const uint width, const uint kh, const uint kw,
                                       const uint stride, const uint pad_top, const uint pad_left,
                                       const uint out_h, const uint out_w, const uint filters,
                                       const int act) {
  if (ox >= out_w || oy >= out_h || line >= batch * filters) return;
  const uint f = line % filters, b = line / filters;
  __global const float* wf = w + w_off + (size_t)f * channels * kh * kw;
  const long x0 = (long)(ox * stride) - (long)pad_left;
  float sum = 0.0f;
  for (uint c = 0; c < channels; ++c) {
    __global const float* plane = x + x_off + ((size_t)b * channels + c) * height * width;
    for (uint i = 0; i < kh; ++i) {
      const int yy = (int)(oy * stride + i) - (int)pad_top;
      if (yy < 0 || yy >= (int)height) continue;
      for (uint j = 0; j < kw; ++j) {
        const long xx = x0 + (long)j;
        if (xx >= 0 && xx < (long)width) sum += wf[(c * kh + i) * kw + j] * plane[(long)yy * width + xx];
      }
    }
  }
  const size_t out = ((size_t)line * out_h + oy) * out_w + ox;
  const float v = sum + bias[bias_off + f];
  if (act == ACT_GELU) z[z_off + out] = v;  // a constant per kernel
  y[y_off + out] = activate(v, act);
}

// The same for a CPU driver, which runs a work-group's items as a loop (PoCL's vectorizes only a
// kernel's innermost loop; Intel's runtime, held to it by the hint below): one work-item per output row (b,
// f, oy), adding each tap's contiguous run of x to the row in y, then the bias and activation.
static inline void conv_direct_forward_row(
    const size_t item, __global const float* restrict x, const uint x_off, __global const float* restrict w,
    const uint w_off, __global const float* restrict bias, const uint bias_off, __global float* restrict y,
    const uint y_off, __global float* z, const uint z_off, const uint batch, const uint channels,
    const uint height, const uint width, const uint kh, const uint kw, const uint stride, const uint pad_top,
    const uint pad_left, const uint out_h, const uint out_w, const uint filters, const int act) {
  if (item >= (size_t)batch * filters * out_h) return;
  const uint oy = (uint)(item % out_h), line = (uint)(item / out_h), f = line % filters, b = line / filters;
  __global const float* wf = w + w_off + (size_t)f * channels * kh * kw;
  __global float* out = y + y_off + item * out_w;
  if (stride == 1 && pad_left == 0 && out_w >= 8 && out_w + kw - 1 <= width) {
    // Every tap reads the whole row inside the image: the taps summed in registers, eight columns at
    // a time (the last eight overlapping the chunk before where the width is no multiple of 8: the
    // same sums again), stored once (the reference CNN's conv 1: one pass over y's row, not ten).
    for (uint ox0 = 0; ox0 < out_w; ox0 += 8) {
      const uint ox = min(ox0, out_w - 8);
      float8 sum = (float8)(0.0f);
      for (uint c = 0; c < channels; ++c) {
        __global const float* plane = x + x_off + ((size_t)b * channels + c) * height * width;
        for (uint i = 0; i < kh; ++i) {
          const int yy = (int)(oy + i) - (int)pad_top;
          if (yy < 0 || yy >= (int)height) continue;
          __global const float* row = plane + (size_t)yy * width + ox;
          __global const float* taps = wf + (c * kh + i) * kw;
          if (kw == 3) {  // the common kernel, its taps unrolled (PoCL left the loop's 3 rounds rolled)
            sum += taps[0] * vload8(0, row);
            sum += taps[1] * vload8(0, row + 1);
            sum += taps[2] * vload8(0, row + 2);
          } else {
            for (uint j = 0; j < kw; ++j) sum += taps[j] * vload8(0, row + j);
          }
        }
      }
      const float8 v = sum + bias[bias_off + f];
      if (act == ACT_GELU) vstore8(v, 0, z + z_off + item * out_w + ox);  // a constant per kernel
      vstore8(activate8(v, act), 0, out + ox);
    }
    return;
  }
  {
    for (uint ox = 0; ox < out_w; ++ox) out[ox] = 0.0f;
    for (uint c = 0; c < channels; ++c) {
      __global const float* plane = x + x_off + ((size_t)b * channels + c) * height * width;
      for (uint i = 0; i < kh; ++i) {
        const int yy = (int)(oy * stride + i) - (int)pad_top;
        if (yy < 0 || yy >= (int)height) continue;
        for (uint j = 0; j < kw; ++j) {
          uint lo, hi;
          conv_direct_inside(j, width, stride, pad_left, out_w, &lo, &hi);
          const float weight = wf[(c * kh + i) * kw + j];
          const long base = (long)yy * width + (long)j - (long)pad_left;  // + ox·s ≥ 0 for ox ≥ lo
          if (stride == 1) {
            for (uint ox = lo; ox < hi; ++ox) out[ox] += weight * plane[base + ox];
          } else {
            for (uint ox = lo; ox < hi; ++ox) out[ox] += weight * plane[base + (long)ox * stride];
          }
        }
      }
    }
  }
  const float b_f = bias[bias_off + f];
  for (uint ox = 0; ox < out_w; ++ox) {
    const float v = out[ox] + b_f;
    if (act == ACT_GELU) z[z_off + item * out_w + ox] = v;
    out[ox] = activate(v, act);
  }
}

// The forward kernels' parameters, and their values after the work-item's index (object-like
// macros: plain OpenCL C 1.2). Then conv_direct_forward_<activation> over a 3-D range (x over ox,
// y over oy, z over the planes b·F + f) and conv_direct_forward_rows_<activation> over a 1-D one
// (the rows (b·F + f)·OH + oy), the activation a constant in each (as conv.cl's output stage). The
// row form's vec_type_hint keeps Intel's compiler from running rows as lanes (19.8 ms for the reference
// CNN's conv 1 so, 4.8 with the hint; PoCL 2.9 either way).
#define CONV_DIRECT_PARAMS                                                                                \
  __global const float *restrict x, const uint x_off, __global const float *restrict w, const uint w_off, \
      __global const float *restrict bias, const uint bias_off, __global float *restrict y,               \
      const uint y_off, __global float *z, const uint z_off, const uint batch, const uint channels,       \
      const uint height, const uint width, const uint kh, const uint kw, const uint stride,               \
      const uint pad_top, const uint pad_left, const uint out_h, const uint out_w, const uint filters
#define CONV_DIRECT_ARGS                                                                                  \
  x, x_off, w, w_off, bias, bias_off, y, y_off, z, z_off, batch, channels, height, width, kh, kw, stride, \
      pad_top, pad_left, out_h, out_w, filters
#define CONV_DIRECT_KERNELS(NAME, ACT)                                                                       \
  __kernel void conv_direct_forward_##NAME(CONV_DIRECT_PARAMS) {                                             \
    conv_direct_forward(get_global_id(0), get_global_id(1), get_global_id(2), CONV_DIRECT_ARGS, ACT);        \
  }                                                                                                          \
  __kernel __attribute__((vec_type_hint(float4))) void conv_direct_forward_rows_##NAME(CONV_DIRECT_PARAMS) { \
    conv_direct_forward_row(get_global_id(0), CONV_DIRECT_ARGS, ACT);                                        \
  }
CONV_DIRECT_KERNELS(linear, 0)
CONV_DIRECT_KERNELS(relu, 1)
CONV_DIRECT_KERNELS(tanh, 2)
CONV_DIRECT_KERNELS(sigmoid, 3)
CONV_DIRECT_KERNELS(leaky_relu, 4)
CONV_DIRECT_KERNELS(elu, 5)
CONV_DIRECT_KERNELS(gelu, 6)

// The weight gradient, one work-group of WG lanes per block of up to 3×3 weights (f; c, i0…i0+2,
// j0…j0+2) and one per bias: dW[f][t] = Σ_(b,oy,ox) dz[f][b·P + oy·OW + ox]·x[b][c][oy·s+i−pt]
// [ox·s+j−pl] with t = (c·KH + i)·KW + j, db[f] = Σ dz[f][·]. Lane l walks the output rows (b, oy)
// l, l + WG, … (each a contiguous run of dz and, at stride 1, of x), summing a block's nine weights
// at once: one group per weight read dz nine times over and paid a row's set-up per weight (the
// reference CNN's conv 1: 3.3 ms → 1.7 on PoCL, Zen 5). The lanes' sums are added in a fixed tree:
// deterministic. The range is (C·⌈KH/3⌉·⌈KW/3⌉ + 1) × filters groups: x over the block (the last:
// the bias), y over f.
#ifndef WG
#define WG 256
#endif
#define DW_BLOCK 3
#define DW_SUMS (DW_BLOCK * DW_BLOCK)
// vec_type_hint: Intel's compiler otherwise runs the lanes as vector lanes too (the reference CNN's conv 1:
// 6.2 ms so, 3.6 with it; PoCL 3.8 either way).
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) __attribute__((vec_type_hint(float8))) void
conv_direct_weight_grad(__global const float* dz, __global const float* x, const uint x_off,
                        __global float* dw, const uint dw_off, __global float* db, const uint db_off,
                        const uint batch, const uint channels, const uint height, const uint width,
                        const uint kh, const uint kw, const uint stride, const uint pad_top,
                        const uint pad_left, const uint out_h, const uint out_w) {
  __local float part[DW_SUMS * WG];
  const uint lane = get_local_id(0), t = get_group_id(0), f = get_group_id(1);
  const uint i_blocks = (kh + DW_BLOCK - 1) / DW_BLOCK, j_blocks = (kw + DW_BLOCK - 1) / DW_BLOCK;
  const uint blocks = channels * i_blocks * j_blocks, rows = batch * out_h;
  const uint j0 = (t % j_blocks) * DW_BLOCK, i0 = ((t / j_blocks) % i_blocks) * DW_BLOCK;
  const uint c = t / (j_blocks * i_blocks);
  const uint nj = t == blocks ? 1 : min((uint)DW_BLOCK, kw - j0);  // the block's columns of taps
  __global const float* dz_f = dz + (size_t)f * rows * out_w;
  // Explicit vectors over a row's columns: a loop's float sum is not vectorized by a compiler that
  // keeps the order of additions (PoCL: 19.6 ms for the reference CNN's conv 1 one float at a time).
  float8 sum8[DW_SUMS];
  float sum[DW_SUMS];
#pragma unroll
  for (uint q = 0; q < DW_SUMS; ++q) sum8[q] = (float8)(0.0f), sum[q] = 0.0f;
  // The columns [lo, hi) each tap column j0 + jj reads inside the image; at stride 1 with one span for
  // the whole block (valid padding, or an image wider than the padding reaches), a row's dz is loaded once
  // for the block's taps.
  uint lo[DW_BLOCK], hi[DW_BLOCK];
#pragma unroll
  for (uint jj = 0; jj < DW_BLOCK; ++jj) {
    lo[jj] = hi[jj] = 0;
    if (jj < nj) conv_direct_inside(j0 + jj, width, stride, pad_left, out_w, &lo[jj], &hi[jj]);
  }
  bool one_span = stride == 1;
#pragma unroll
  for (uint jj = 1; jj < DW_BLOCK; ++jj)
    if (jj < nj && (lo[jj] != lo[0] || hi[jj] != hi[0])) one_span = false;
  if (t == blocks) {                          // the bias
    for (uint r0 = 0; r0 < rows; r0 += WG) {  // uniform bounds: PoCL runs the lanes as the inner loop
      const uint r = r0 + lane;
      if (r >= rows) continue;
      __global const float* d = dz_f + (size_t)r * out_w;
      uint ox = 0;
      for (; ox + 8 <= out_w; ox += 8) sum8[0] += vload8(0, d + ox);
      for (; ox < out_w; ++ox) sum[0] += d[ox];
    }
  } else {
    for (uint r0 = 0; r0 < rows; r0 += WG) {
      const uint r = r0 + lane;
      if (r >= rows) continue;
      const uint oy = r % out_h, b = r / out_h;
      __global const float* d = dz_f + (size_t)r * out_w;
      __global const float* plane = x + x_off + ((size_t)b * channels + c) * height * width;
      // where x's row of tap row i0 + ii, shifted by the tap column j0, starts in plane (+ ox·s ≥ 0 for
      // ox ≥ lo), if that row is in the image
      long at[DW_BLOCK];
      bool row_in[DW_BLOCK];
#pragma unroll
      for (uint ii = 0; ii < DW_BLOCK; ++ii) {
        const int yy = (int)(oy * stride + i0 + ii) - (int)pad_top;
        row_in[ii] = i0 + ii < kh && yy >= 0 && yy < (int)height;
        at[ii] = (long)yy * width + (long)j0 - (long)pad_left;
      }
      if (one_span) {
        uint ox = lo[0];
        for (; ox + 8 <= hi[0]; ox += 8) {
          const float8 d8 = vload8(0, d + ox);
#pragma unroll
          for (uint ii = 0; ii < DW_BLOCK; ++ii)
            if (row_in[ii])
#pragma unroll
              for (uint jj = 0; jj < DW_BLOCK; ++jj)
                if (jj < nj) sum8[ii * DW_BLOCK + jj] += d8 * vload8(0, plane + (at[ii] + jj + ox));
        }
        for (; ox < hi[0]; ++ox)
#pragma unroll
          for (uint ii = 0; ii < DW_BLOCK; ++ii)
            if (row_in[ii])
#pragma unroll
              for (uint jj = 0; jj < DW_BLOCK; ++jj)
                if (jj < nj) sum[ii * DW_BLOCK + jj] += d[ox] * plane[at[ii] + jj + ox];
      } else {
#pragma unroll
        for (uint ii = 0; ii < DW_BLOCK; ++ii)
          if (row_in[ii])
#pragma unroll
            for (uint jj = 0; jj < DW_BLOCK; ++jj) {
              if (jj >= nj) continue;
              const uint q = ii * DW_BLOCK + jj;
              if (stride == 1) {
                uint ox = lo[jj];
                for (; ox + 8 <= hi[jj]; ox += 8)
                  sum8[q] += vload8(0, d + ox) * vload8(0, plane + (at[ii] + jj + ox));
                for (; ox < hi[jj]; ++ox) sum[q] += d[ox] * plane[at[ii] + jj + ox];
              } else {
                for (uint ox = lo[jj]; ox < hi[jj]; ++ox)
                  sum[q] += d[ox] * plane[at[ii] + jj + (long)ox * stride];
              }
            }
      }
    }
  }
#pragma unroll
  for (uint q = 0; q < DW_SUMS; ++q)
    part[q * WG + lane] = sum[q] + (((sum8[q].s0 + sum8[q].s1) + (sum8[q].s2 + sum8[q].s3)) +
                                    ((sum8[q].s4 + sum8[q].s5) + (sum8[q].s6 + sum8[q].s7)));
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint span = WG / 2; span > 0; span /= 2) {
    if (lane < span)
      for (uint q = 0; q < DW_SUMS; ++q) part[q * WG + lane] += part[q * WG + lane + span];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lane != 0) return;
  if (t == blocks) {
    db[db_off + f] = part[0];
    return;
  }
  const uint taps = channels * kh * kw;
  for (uint ii = 0; ii < DW_BLOCK && i0 + ii < kh; ++ii)
    for (uint jj = 0; jj < nj; ++jj)
      dw[dw_off + (size_t)f * taps + (c * kh + i0 + ii) * kw + j0 + jj] = part[(ii * DW_BLOCK + jj) * WG];
}
