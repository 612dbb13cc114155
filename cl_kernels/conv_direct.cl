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
// kernel's innermost loop; Intel's runtime, held to it by the hint below): one work-item per output row (b, f, oy),
// adding each tap's contiguous run of x to the row in y, then the bias and activation.
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
#define CONV_DIRECT_KERNELS(NAME, ACT)                                                                \
  __kernel void conv_direct_forward_##NAME(CONV_DIRECT_PARAMS) {                                      \
    conv_direct_forward(get_global_id(0), get_global_id(1), get_global_id(2), CONV_DIRECT_ARGS, ACT); \
  }                                                                                                   \
  __kernel __attribute__((vec_type_hint(float4))) void conv_direct_forward_rows_##NAME(CONV_DIRECT_PARAMS) { \
    conv_direct_forward_row(get_global_id(0), CONV_DIRECT_ARGS, ACT);                                 \
  }
CONV_DIRECT_KERNELS(linear, 0)
CONV_DIRECT_KERNELS(relu, 1)
CONV_DIRECT_KERNELS(tanh, 2)
CONV_DIRECT_KERNELS(sigmoid, 3)
CONV_DIRECT_KERNELS(leaky_relu, 4)
CONV_DIRECT_KERNELS(elu, 5)
CONV_DIRECT_KERNELS(gelu, 6)

// The weight gradient, one work-group of WG lanes per weight (f, t) and per bias (t = C·KH·KW):
// dW[f][t] = Σ_(b,oy,ox) dz[f][b·P + oy·OW + ox]·x[b][c][oy·s+i−pt][ox·s+j−pl] with t = (c·KH + i)·KW + j,
// db[f] = Σ dz[f][·]. Lane l walks the output rows (b, oy) l, l + WG, … (each a contiguous run of dz
// and, at stride 1, of x) and the lanes' sums are added in a fixed tree: deterministic. The range
// is (taps + 1) × filters groups: x over t, y over f.
#ifndef WG
#define WG 256
#endif
// vec_type_hint: Intel's compiler otherwise runs the lanes as vector lanes too (the reference CNN's conv 1:
// 6.2 ms so, 3.6 with it; PoCL 3.8 either way).
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) __attribute__((vec_type_hint(float8))) void
conv_direct_weight_grad(
    __global const float* dz, __global const float* x, const uint x_off, __global float* dw,
    const uint dw_off, __global float* db, const uint db_off, const uint batch, const uint channels,
    const uint height, const uint width, const uint kh, const uint kw, const uint stride, const uint pad_top,
    const uint pad_left, const uint out_h, const uint out_w) {
  __local float part[WG];
  const uint lane = get_local_id(0), t = get_group_id(0), f = get_group_id(1);
  const uint taps = channels * kh * kw, rows = batch * out_h;
  __global const float* dz_f = dz + (size_t)f * rows * out_w;
  // Explicit vectors over a row's columns: a loop's float sum is not vectorized by a compiler that
  // keeps the order of additions (PoCL: 19.6 ms for the reference CNN's conv 1 one float at a time).
  float8 sum8 = (float8)(0.0f);
  float sum = 0.0f;
  if (t == taps) {                            // the bias
    for (uint r0 = 0; r0 < rows; r0 += WG) {  // uniform bounds: PoCL runs the lanes as the inner loop
      const uint r = r0 + lane;
      if (r >= rows) continue;
      __global const float* d = dz_f + (size_t)r * out_w;
      uint ox = 0;
      for (; ox + 8 <= out_w; ox += 8) sum8 += vload8(0, d + ox);
      for (; ox < out_w; ++ox) sum += d[ox];
    }
  } else {
    const uint j = t % kw, i = (t / kw) % kh, c = t / (kw * kh);
    uint lo, hi;
    conv_direct_inside(j, width, stride, pad_left, out_w, &lo, &hi);
    for (uint r0 = 0; r0 < rows; r0 += WG) {
      const uint r = r0 + lane;
      if (r >= rows) continue;
      const uint oy = r % out_h, b = r / out_h;
      const int yy = (int)(oy * stride + i) - (int)pad_top;
      if (yy < 0 || yy >= (int)height) continue;
      __global const float* d = dz_f + (size_t)r * out_w;
      __global const float* in = x + x_off + (((size_t)b * channels + c) * height + (uint)yy) * width;
      const long base = (long)j - (long)pad_left;  // + ox·s ≥ 0 for ox ≥ lo
      if (stride == 1) {
        uint ox = lo;
        for (; ox + 8 <= hi; ox += 8) sum8 += vload8(0, d + ox) * vload8(0, in + (base + (long)ox));
        for (; ox < hi; ++ox) sum += d[ox] * in[base + ox];
      } else {
        for (uint ox = lo; ox < hi; ++ox) sum += d[ox] * in[base + (long)ox * stride];
      }
    }
  }
  part[lane] =
      sum + (((sum8.s0 + sum8.s1) + (sum8.s2 + sum8.s3)) + ((sum8.s4 + sum8.s5) + (sum8.s6 + sum8.s7)));
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint span = WG / 2; span > 0; span /= 2) {
    if (lane < span) part[lane] += part[lane + span];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lane != 0) return;
  if (t == taps)
    db[db_off + f] = part[0];
  else
    dw[dw_off + (size_t)f * taps + t] = part[0];
}
