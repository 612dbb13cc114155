// Convolution as whole-batch GEMMs over NCHW tensors (the GEMMs themselves are CLBlast's):
// im2col into a channel-major column matrix, its adjoint col2im, and the layer's output stage
// (bias + activation while reordering channel-major GEMM results back to NCHW) with its backward.
// Shapes: x:(B,C,H,W); col:(C·KH·KW, B·OH·OW) with row (c·KH + i)·KW + j and column b·P + p,
// P = OH·OW; the channel-major GEMM result cf:(F, B·P); y:(B,F,P).
// Every kernel's x index (get_global_id(0)) is a size_t that addresses memory directly: Intel's
// runtime vectorizes across work-items in x, and from a 32-bit index (which may wrap) it cannot
// prove neighbouring lanes adjacent, so it gathered and scattered — conv_output_forward took
// 8.7 ms for the reference CNN's conv 2 with `uint p`, 3.0 with `size_t p` (PoCL: 3.8, 3.0).

// col[(c,i,j)][b·P + oy·OW+ox] = x[b][c][oy·s−pt+i][ox·s−pl+j], 0 outside the image. A 3-D
// range, one element per work-item: x over ox, y over oy, z over the rows k·B + b of col (k the
// patch position (c,i,j)), the plane's index arithmetic uniform over a work-group. Addresses are
// 64-bit offsets of the size_t ox: Intel's runtime, which runs lanes across work-items, then moves
// adjacent lanes with vector loads and stores (from 32-bit indices it gathered and scattered: 21 ms
// for the reference CNN's conv 2; 12.5 with each work-item walking the batch; 8.5 so). PoCL's CPU
// driver runs im2col_rows below instead (3.4 ms there; this form 57).
__kernel void im2col_batched(__global const float* x, const uint x_off, __global float* col, const uint batch,
                             const uint channels, const uint height, const uint width, const uint kh,
                             const uint kw, const uint stride, const uint pad_top, const uint pad_left,
                             const uint out_h, const uint out_w) {
  const size_t ox = get_global_id(0);
  const uint oy = get_global_id(1), line = get_global_id(2), b = line % batch, k = line / batch;
  if (ox >= out_w || oy >= out_h) return;
  const uint kj = k % kw, ki = (k / kw) % kh, c = k / (kw * kh);
  const int y = (int)(oy * stride + ki) - (int)pad_top;
  const long xx = (long)(ox * stride) + (long)kj - (long)pad_left;
  __global float* out = col + ((size_t)line * out_h + oy) * out_w + ox;
  if (y < 0 || y >= (int)height || xx < 0 || xx >= (long)width) {
    *out = 0.0f;
    return;
  }
  *out = x[(long)(x_off + (((size_t)b * channels + c) * height + (uint)y) * width) + xx];
}

// im2col's other form, for a driver that runs a work-group's items as a loop and vectorizes only
// a kernel's innermost loop (PoCL's CPU driver; Runtime::row_kernels): one work-item per row
// (k, b) of col, copying each output row's run of x inside the image (contiguous at stride 1) with
// the zeros of the padding on either side written apart, so the copy is a plain vector loop. (The
// batch-walking form ran on PoCL as 8-wide gathers and scatters: 13 ms for the reference CNN's conv 2.)
__kernel void im2col_rows(__global const float* restrict x, const uint x_off, __global float* restrict col,
                          const uint batch, const uint channels, const uint height, const uint width,
                          const uint kh, const uint kw, const uint stride, const uint pad_top,
                          const uint pad_left, const uint out_h, const uint out_w) {
  const size_t line = get_global_id(0);  // k·B + b
  if (line >= (size_t)channels * kh * kw * batch) return;
  const uint b = (uint)(line % batch), k = (uint)(line / batch);
  const uint kj = k % kw, ki = (k / kw) % kh, c = k / (kw * kh);
  // ox reads column ox·s + kj − pl: inside the image for ox in [lo, hi)
  const uint lo = min(out_w, kj >= pad_left ? 0u : (pad_left - kj + stride - 1) / stride);
  const uint hi = width + pad_left <= kj ? 0u : max(lo, min(out_w, (width + pad_left - kj - 1) / stride + 1));
  __global const float* in = x + x_off + ((size_t)b * channels + c) * height * width;
  __global float* out = col + line * out_h * out_w;
  for (uint oy = 0; oy < out_h; ++oy, out += out_w) {
    const int y = (int)(oy * stride + ki) - (int)pad_top;
    if (y < 0 || y >= (int)height) {
      for (uint ox = 0; ox < out_w; ++ox) out[ox] = 0.0f;
      continue;
    }
    const long base = (long)y * width + (long)kj - (long)pad_left;  // + ox·s ≥ 0 for ox ≥ lo
    for (uint ox = 0; ox < lo; ++ox) out[ox] = 0.0f;
    if (stride == 1) {
      for (uint ox = lo; ox < hi; ++ox) out[ox] = in[base + ox];
    } else {
      for (uint ox = lo; ox < hi; ++ox) out[ox] = in[base + (long)ox * stride];
    }
    for (uint ox = hi; ox < out_w; ++ox) out[ox] = 0.0f;
  }
}

// x in channels-last order for im2row: xt[b][p][c] = x[b][c][p] (p a pixel of the H·W plane). A
// 2-D range: x over p (neighbouring reads), y over the planes b·C + c. (Through TILE × TILE
// blocks of local memory, reads and writes both along rows: 4.8 ms on PoCL for the reference CNN's
// conv 2 and 6.0 on Intel's runtime, against 1.9 either way.)
__kernel void to_channels_last(__global const float* x, const uint x_off, __global float* xt, const uint batch,
                               const uint channels, const uint pixels) {
  const size_t p = get_global_id(0);
  const uint bc = get_global_id(1), c = bc % channels, b = bc / channels;
  if (p >= pixels || b >= batch) return;
  xt[((size_t)b * pixels + p) * channels + c] = x[x_off + (size_t)bc * pixels + p];
}

// The same patches as rows of `ld` ≥ C·KH·KW floats, for the weight gradient's GEMM, the patch in
// tap-major order (i, j, c) — the layer sums dW's columns back to W's (c, i, j) order
// (conv_sum_slices): colt[b·P + oy·OW+ox][(i·KW + j)·C + c] = xt[b][oy·s−pt+i][ox·s−pl+j][c], 0
// outside the image, from channels-last xt. A tap row i of a patch, its KW·C floats, is then one
// contiguous run of xt (whatever the stride): copies where the (c, i, j) order gathered from x (the
// reference CNN's conv 2: 12.7 ms on Intel's runtime, 13.0 on PoCL; now 5.8 and 5.1, plus 1.9 for
// to_channels_last). Addresses are a uniform start plus q, so Intel's runtime, which runs lanes
// across work-items, loads and stores them as vectors (from x0 + j computed per lane: 10.6 ms).
// A row's padding after the patch is not written: the caller zeroes it once per buffer. A 3-D
// range: x over q = j·C + c, y over the output rows (b, oy), z over i; a work-item walks the row's ox.
__kernel void im2row_taps(__global const float* xt, __global float* colt, const uint batch, const uint channels,
                          const uint height, const uint width, const uint kh, const uint kw, const uint stride,
                          const uint pad_top, const uint pad_left, const uint out_h, const uint out_w,
                          const uint ld) {
  const size_t q = get_global_id(0);
  const uint line = get_global_id(1), i = get_global_id(2), oy = line % out_h, b = line / out_h;
  const uint run = kw * channels;
  if (q >= run || b >= batch) return;
  const uint j = (uint)q / channels;
  const int y = (int)(oy * stride + i) - (int)pad_top;
  __global float* out = colt + (size_t)line * out_w * ld + (size_t)i * run + q;
  if (y < 0 || y >= (int)height) {
    for (uint ox = 0; ox < out_w; ++ox) out[(size_t)ox * ld] = 0.0f;
    return;
  }
  // xt's run for ox starts at pixel (y, x0 = ox·s − pl), the same for every q: q is the offset in it
  __global const float* in = xt + ((size_t)b * height + (uint)y) * width * channels + q;
  for (uint ox = 0; ox < out_w; ++ox) {
    const int x0 = (int)(ox * stride) - (int)pad_left, xx = x0 + (int)j;
    out[(size_t)ox * ld] = xx >= 0 && xx < (int)width ? in[(long)x0 * channels] : 0.0f;
  }
}

// im2row_taps' other form, for PoCL's CPU driver (Runtime::row_kernels): one work-item per output
// row (b, oy) and tap row i, copying each pixel's run of KW·C floats with the zeros of the padding
// apart (a plain vector loop; the taps form there loops over ox with strided stores).
__kernel void im2row_taps_rows(__global const float* restrict xt, __global float* restrict colt, const uint batch,
                               const uint channels, const uint height, const uint width, const uint kh,
                               const uint kw, const uint stride, const uint pad_top, const uint pad_left,
                               const uint out_h, const uint out_w, const uint ld) {
  const size_t item = get_global_id(0);  // line·KH + i
  if (item >= (size_t)batch * out_h * kh) return;
  const uint i = (uint)(item % kh), line = (uint)(item / kh), oy = line % out_h, b = line / out_h;
  const uint run = kw * channels;
  const int y = (int)(oy * stride + i) - (int)pad_top;
  __global float* out = colt + (size_t)line * out_w * ld + (size_t)i * run;
  if (y < 0 || y >= (int)height) {
    for (uint ox = 0; ox < out_w; ++ox, out += ld)
      for (uint q = 0; q < run; ++q) out[q] = 0.0f;
    return;
  }
  __global const float* in = xt + ((size_t)b * height + (uint)y) * width * channels;
  for (uint ox = 0; ox < out_w; ++ox, out += ld) {
    const int x0 = (int)(ox * stride) - (int)pad_left;  // the pixel of tap j = 0
    const uint lo = (uint)clamp(-x0, 0, (int)kw) * channels;
    const uint hi = (uint)clamp((int)width - x0, (int)(lo / channels), (int)kw) * channels;
    const long base = (long)x0 * channels;  // + q ≥ 0 for q ≥ lo
    for (uint q = 0; q < lo; ++q) out[q] = 0.0f;
    for (uint q = lo; q < hi; ++q) out[q] = in[base + q];
    for (uint q = hi; q < run; ++q) out[q] = 0.0f;
  }
}

// The adjoint of im2col, gathered (no atomics, a fixed order): dx[b][c][y][x] = Σ over the
// (i, j, oy, ox) that read pixel (y, x) of dcol at that position. A 3-D range: x over the pixel's
// column, y over its row, z over the planes b·C + c; stride 1 (the common case) skips the
// divisibility tests. 64-bit offsets of x, as in im2col (Intel's runtime: 10.6 ms for the
// reference CNN's conv 2 as a 2-D range over rows, now 7.0; PoCL 13 either way).
__kernel void col2im_batched(__global const float* col, __global float* dx, const uint batch,
                             const uint channels, const uint height, const uint width, const uint kh,
                             const uint kw, const uint stride, const uint pad_top, const uint pad_left,
                             const uint out_h, const uint out_w) {
  const size_t xx = get_global_id(0);
  const uint y = get_global_id(1), bc = get_global_id(2), c = bc % channels, b = bc / channels;
  if (xx >= width || y >= height) return;
  const size_t p_count = (size_t)out_h * out_w, row = (size_t)batch * p_count;
  __global const float* base = col + b * p_count;
  float sum = 0.0f;
  for (uint ki = 0; ki < kh; ++ki) {
    const int ty = (int)(y + pad_top) - (int)ki;
    if (ty < 0 || ty % (int)stride != 0) continue;
    const uint oy = (uint)ty / stride;
    if (oy >= out_h) continue;
    __global const float* plane = base + ((size_t)c * kh + ki) * kw * row + (size_t)oy * out_w;
    for (uint kj = 0; kj < kw; ++kj) {
      const long tx = (long)xx + (long)pad_left - (long)kj;
      if (stride == 1) {
        if (tx >= 0 && tx < (long)out_w) sum += plane[(long)(kj * row) + tx];
      } else if (tx >= 0 && tx % stride == 0 && tx / stride < (long)out_w) {
        sum += plane[(long)(kj * row) + tx / stride];
      }
    }
  }
  dx[((size_t)bc * height + y) * width + xx] = sum;
}

// col2im's other form, for a driver that runs a work-group's items as a loop and vectorizes only
// a kernel's innermost loop (PoCL's CPU driver; Runtime::row_kernels): one work-item per image row
// (b·C + c)·H + y, zeroing it, then adding each (i, j)'s contiguous run of dcol to it — per pixel
// the same additions in the same order as col2im_batched (the results are identical). The tap
// row's test is written out in both: as a shared function it made this form 7.8 -> 11.1 ms on PoCL.
__kernel void col2im_rows(__global const float* restrict col, __global float* restrict dx, const uint batch,
                          const uint channels, const uint height, const uint width, const uint kh,
                          const uint kw, const uint stride, const uint pad_top, const uint pad_left,
                          const uint out_h, const uint out_w) {
  const size_t line = get_global_id(0);
  if (line >= (size_t)batch * channels * height) return;
  const uint y = (uint)line % height, bc = (uint)line / height, c = bc % channels, b = bc / channels;  // fits
  const size_t p_count = (size_t)out_h * out_w, row = (size_t)batch * p_count;
  __global const float* base = col + b * p_count;
  __global float* out = dx + line * width;
  for (uint xx = 0; xx < width; ++xx) out[xx] = 0.0f;
  for (uint ki = 0; ki < kh; ++ki) {
    const int ty = (int)(y + pad_top) - (int)ki;
    if (ty < 0 || ty % (int)stride != 0) continue;
    const uint oy = (uint)ty / stride;
    if (oy >= out_h) continue;
    __global const float* plane = base + ((size_t)c * kh + ki) * kw * row + (size_t)oy * out_w;
    for (uint kj = 0; kj < kw; ++kj) {
      __global const float* in = plane + kj * row;
      // The pixel x = ox·s + j − pl that position ox read, for the ox whose x lies inside the row: the
      // bounds first, so that the loop has no test (a test there made PoCL's AVX2 code masked stores,
      // slow on AMD's cores: the reference CNN's conv 2, 7.8 ms on Zen 4 against 5.5 in AVX-512 code).
      const int shift = (int)kj - (int)pad_left;  // x = ox·s + shift
      const uint ox_lo = shift >= 0 ? 0 : ((uint)(-shift) + stride - 1) / stride;
      const int room = (int)width - shift;  // x < width ⇔ ox·s < room
      const uint ox_hi = room <= 0 ? 0 : min(out_w, ((uint)room + stride - 1) / stride);
      if (stride == 1) {
        for (uint ox = ox_lo; ox < ox_hi; ++ox) out[(int)ox + shift] += in[ox];
      } else {
        for (uint ox = ox_lo; ox < ox_hi; ++ox) out[(int)(ox * stride) + shift] += in[ox];
      }
    }
  }
}

// y[b][f][p] = act(cf[f][b·P + p] + bias[f]): the channel-major GEMM result back to NCHW, with the
// bias and activation (common.cl) in the same pass; element p of plane (b, f). For gelu, z (laid out
// as y, at z_off) gets the value before the activation.
// One kernel per activation and range (below), the activation a constant in each: with `act` a
// kernel argument, PoCL ran the pass as scalar code and Intel's runtime computed tanh and exp on
// every lane whatever the activation (the reference CNN's conv 2: 3.0 ms on either, now 1.9 and 1.8).
static inline void conv_output_forward(const size_t p, const uint f, const uint b, __global const float* cf,
                                       __global float* y, const uint y_off, __global const float* bias,
                                       const uint bias_off, const uint batch, const uint filters,
                                       const uint plane, const int act, __global float* z, const uint z_off) {
  if (p >= plane || f >= filters || b >= batch) return;
  const size_t out = ((size_t)b * filters + f) * plane + p;
  const float v = cf[((size_t)f * batch + b) * plane + p] + bias[bias_off + f];
  if (act == ACT_GELU) z[z_off + out] = v;  // gelu's backward needs z (common.cl); a constant per kernel
  y[y_off + out] = activate(v, act);
}

// The backward of conv_output_forward: dz = dy·act'(y) (y: the output kept, or z for gelu) from NCHW into the channel-major dcf:(F, B·P).
// conv_bias_backward then sums dcf's rows. (One work-group per channel doing both, its lanes looping
// over the samples, took 10.3 ms for the reference CNN's conv 2 on PoCL's AVX2 class, where this
// pass moves 57 MB.)
static inline void conv_output_backward(const size_t p, const uint f, const uint b, __global const float* y,
                                        const uint y_off, __global const float* dy, const uint dy_off,
                                        __global float* dcf, const uint batch, const uint filters,
                                        const uint plane, const int act) {
  if (p >= plane || f >= filters || b >= batch) return;
  const size_t in = ((size_t)b * filters + f) * plane + p;
  dcf[((size_t)f * batch + b) * plane + p] = dy[dy_off + in] * activate_grad(y[y_off + in], act);
}

// The same pass, one work-item per row (b, f) of P positions, four at a time, then the rest one by one
// (every CPU driver; the vec_type_hint below keeps Intel's from running rows as lanes): over the 3-D
// range, PoCL's AVX2 code guarded each lane's
// store by the range check with masked stores, slow on AMD's cores (the reference CNN's conv 2: 3.7 ms
// on Zen 4 against 1.8 in its AVX-512 code). It also writes the row's sum to row_sums[b·F + f] (in a
// fixed order), which conv_bias_from_rows adds up per channel: the bias gradient without another
// pass over dcf (conv_bias_backward: 2.4 ms for that conv 2 on PoCL's AVX-512 code).
static inline void conv_output_backward_row(const uint row, __global const float* restrict y, const uint y_off,
                                            __global const float* restrict dy, const uint dy_off,
                                            __global float* restrict dcf, __global float* restrict row_sums,
                                            const uint batch, const uint filters, const uint plane,
                                            const int act) {
  if (row >= batch * filters) return;
  const uint f = row % filters, b = row / filters;
  __global const float* yr = y + y_off + (size_t)row * plane;
  __global const float* dyr = dy + dy_off + (size_t)row * plane;
  __global float* out = dcf + ((size_t)f * batch + b) * plane;
  float4 sum4 = (float4)(0.0f);
  uint p = 0;
  for (; p + 4 <= plane; p += 4) {
    const float4 k = vload4(0, yr + p);
    const float4 g = (float4)(activate_grad(k.s0, act), activate_grad(k.s1, act), activate_grad(k.s2, act),
                              activate_grad(k.s3, act));
    const float4 dz = vload4(0, dyr + p) * g;
    vstore4(dz, 0, out + p);
    sum4 += dz;
  }
  float sum = (sum4.s0 + sum4.s1) + (sum4.s2 + sum4.s3);
  for (; p < plane; ++p) {
    const float dz = dyr[p] * activate_grad(yr[p], act);
    out[p] = dz;
    sum += dz;
  }
  row_sums[row] = sum;
}

// dbias[f] = Σ_b row_sums[b·F + f], in b's order: one work-item per channel.
__kernel void conv_bias_from_rows(__global const float* row_sums, const uint batch, const uint filters,
                                  __global float* dbias, const uint dbias_off) {
  const uint f = (uint)get_global_id(0);
  if (f >= filters) return;
  float sum = 0.0f;
  for (uint b = 0; b < batch; ++b) sum += row_sums[(size_t)b * filters + f];
  dbias[dbias_off + f] = sum;
}

// For each of common.cl's activations (ConvOps picks them by name): conv_output_forward_<activation>
// over a 3-D range (x over p, y over f, z over b), for PoCL's CPU driver (Runtime::row_kernels),
// which divided a 2-D row index per lane (3.9 ms for the reference CNN's conv 2's forward), and
// conv_output_backward_rows_<activation> (above) on every CPU driver; the same names with `_2d` over
// a 2-D range (x over p, y over the rows b·F + f) elsewhere: Intel's runtime took 7.6 ms for the
// reference CNN's four passes over the 3-D range, 5.8 over this one.
#define CONV_OUTPUT_KERNELS(NAME, ACT)                                                                            \
  __kernel void conv_output_forward_##NAME(__global const float* cf, __global float* y, const uint y_off,        \
                                           __global const float* bias, const uint bias_off, const uint batch,   \
                                           const uint filters, const uint plane, __global float* z, const uint z_off) {           \
    conv_output_forward(get_global_id(0), get_global_id(1), get_global_id(2), cf, y, y_off, bias, bias_off,    \
                        batch, filters, plane, ACT, z, z_off);                                                          \
  }                                                                                                              \
  __kernel void conv_output_forward_2d_##NAME(__global const float* cf, __global float* y, const uint y_off,     \
                                              __global const float* bias, const uint bias_off, const uint batch, \
                                              const uint filters, const uint plane, __global float* z, const uint z_off) {        \
    const uint row = get_global_id(1);                                                                           \
    conv_output_forward(get_global_id(0), row % filters, row / filters, cf, y, y_off, bias, bias_off, batch,     \
                        filters, plane, ACT, z, z_off);                                                                 \
  }                                                                                                              \
  __kernel __attribute__((vec_type_hint(float4))) void conv_output_backward_rows_##NAME(                        \
      __global const float* y, const uint y_off, __global const float* dy, const uint dy_off, __global float* dcf, \
      __global float* row_sums, const uint batch, const uint filters, const uint plane) {                        \
    conv_output_backward_row((uint)get_global_id(0), y, y_off, dy, dy_off, dcf, row_sums, batch, filters, plane, \
                             ACT);                                                                               \
  }                                                                                                              \
  __kernel void conv_output_backward_2d_##NAME(__global const float* y, const uint y_off,                        \
                                               __global const float* dy, const uint dy_off, __global float* dcf,\
                                               const uint batch, const uint filters, const uint plane) {        \
    const uint row = get_global_id(1);                                                                           \
    conv_output_backward(get_global_id(0), row % filters, row / filters, y, y_off, dy, dy_off, dcf, batch,     \
                         filters, plane, ACT);                                                                   \
  }
CONV_OUTPUT_KERNELS(linear, 0)
CONV_OUTPUT_KERNELS(relu, 1)
CONV_OUTPUT_KERNELS(tanh, 2)
CONV_OUTPUT_KERNELS(sigmoid, 3)
CONV_OUTPUT_KERNELS(leaky_relu, 4)
CONV_OUTPUT_KERNELS(elu, 5)
CONV_OUTPUT_KERNELS(gelu, 6)

// dbias[f] = Σ dcf[f][·] over `count` = B·P. One work-group of WG lanes per channel; lane l sums
// elements l, l+WG, … and the lanes' sums are added in a fixed tree, so the result is deterministic.
#ifndef WG
#define WG 256
#endif
__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void conv_bias_backward(__global const float* dcf, const uint count, __global float* dbias, const uint dbias_off) {
  __local float part[WG];
  const uint lane = get_local_id(0);
  __global const float* row = dcf + (size_t)get_group_id(0) * count;
  float sum = 0.0f;
  for (uint i0 = 0; i0 < count; i0 += WG) {  // uniform bounds: PoCL runs the lanes as the inner loop
    const uint i = i0 + lane;
    if (i < count) sum += row[i];
  }
  part[lane] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint span = WG / 2; span > 0; span /= 2) {
    if (lane < span) part[lane] += part[lane + span];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lane == 0) dbias[dbias_off + get_group_id(0)] = part[0];
}

// rows[q][f] = dcf[f][q] for f < filters, 0 up to ld: dz's rows, for the weight gradient's GEMM.
// A 2-D range: x over the row's ld positions (neighbouring stores), y over runs of DZ_ROWS_RUN rows
// (each work-item's reads then walk along one row of dcf).
#define DZ_ROWS_RUN 8
__kernel void conv_dz_rows(__global const float* dcf, __global float* rows, const uint count,
                           const uint filters, const uint ld) {
  const size_t f = get_global_id(0);
  const size_t first = (size_t)get_global_id(1) * DZ_ROWS_RUN;
  if (f >= ld || first >= count) return;
  __global float* out = rows + first * ld + f;
  __global const float* in = dcf + (size_t)(f < filters ? f : 0) * count + first;
  for (uint i = 0; i < DZ_ROWS_RUN && first + i < count; ++i) out[(size_t)i * ld] = f < filters ? in[i] : 0.0f;
}

// t[r·ld + col] = value for r < rows: colt's ones column (the bias gradient's, see conv2d.cpp).
__kernel void conv_fill_column(__global float* t, const uint rows, const uint ld, const uint col,
                               const float value) {
  const size_t r = get_global_id(0);
  if (r < rows) t[r * ld + col] = value;
}

// The weight gradient from its slices: dw[f][c·T + t] = Σ_s parts[s][f][t·C + c] (s in order:
// deterministic), parts[s] a (rows ≥ filters) × ld matrix at s·slice_stride in im2row_taps' column
// order (tap t = i·KW + j major, channel c minor; T taps), dw a filters × cols one at dw_off in W's
// (c, i, j) order (the same order when C = 1). A 2-D range: x over runs of four parts columns (vector
// loads: a work-item's loop over the slices is scalar code on PoCL, which took 3.5 ms for the
// reference CNN's conv 2 in 128 slices one float at a time), y over f. With with_db, the work-item
// of the first run also sums column `cols`, the bias gradient that colt's ones column formed.
__kernel void conv_sum_slices(__global const float* parts, const uint slices, const uint slice_stride,
                              const uint ld, __global float* dw, const uint dw_off, const uint filters,
                              const uint cols, const uint channels, __global float* db, const uint db_off,
                              const uint with_db) {
  const size_t j0 = 4 * get_global_id(0);
  const uint f = get_global_id(1);
  if (j0 >= cols || f >= filters) return;
  if (with_db && j0 == 0) {  // db[f] = Σ_s parts[s][f][cols]: the bias gradient, from colt's ones column
    float sum = 0.0f;
    for (uint s = 0; s < slices; ++s) sum += parts[(size_t)s * slice_stride + (size_t)f * ld + cols];
    db[db_off + f] = sum;
  }
  __global const float* in = parts + (size_t)f * ld + j0;
  __global float* out = dw + dw_off + (size_t)f * cols;
  const uint taps = cols / channels;
  if (j0 + 4 <= cols) {
    float4 sum = (float4)(0.0f);
    for (uint s = 0; s < slices; ++s) sum += vload4(0, in + (size_t)s * slice_stride);
    if (channels == 1) {
      vstore4(sum, 0, out + j0);
      return;
    }
    const float part[4] = {sum.x, sum.y, sum.z, sum.w};
    for (uint u = 0; u < 4; ++u) {
      const uint j = (uint)j0 + u;
      out[(j % channels) * taps + j / channels] = part[u];
    }
    return;
  }
  for (uint u = 0; u < cols - j0; ++u) {
    float sum = 0.0f;
    for (uint s = 0; s < slices; ++s) sum += in[(size_t)s * slice_stride + u];
    const uint j = (uint)j0 + u;
    out[(j % channels) * taps + j / channels] = sum;
  }
}
