// Max pooling over NCHW planes (valid windows): the forward keeps the position of each window's
// maximum (the first one on ties) so the backward routes the gradient there. The backward gathers
// per input pixel, so overlapping windows need no atomics and the order is fixed.

// y:(B·C, OH, OW), arg: index y·W+x of the max within its input plane. A 3-D range: x over ox
// (size_t: see conv.cl), y over oy, z over the planes (from one row index plane·OH + oy, PoCL
// divided per lane). The common 2×2 window is written out without loops, so that PoCL vectorizes
// across the work-items, in the same order and with the same comparisons as the loops (3.0 ms on
// PoCL for the reference CNN's pool as a scalar loop over the window).
__kernel void maxpool_forward(__global const float* x, const uint x_off, __global float* y,
                              __global int* arg, const uint planes, const uint height, const uint width,
                              const uint size, const uint stride, const uint out_h, const uint out_w) {
  const size_t ox = get_global_id(0);
  const uint oy = get_global_id(1), plane = get_global_id(2);
  if (ox >= out_w || oy >= out_h) return;
  const size_t i = ((size_t)plane * out_h + oy) * out_w + ox;
  __global const float* in = x + x_off + (size_t)plane * height * width;
  int best_at = (int)(oy * stride * width + ox * stride);
  float best = in[best_at];
  if (size == 2) {
    const int at = best_at;
    const float right = in[at + 1], below = in[at + (int)width], diagonal = in[at + (int)width + 1];
    best_at = right > best ? at + 1 : best_at;
    best = right > best ? right : best;
    best_at = below > best ? at + (int)width : best_at;
    best = below > best ? below : best;
    best_at = diagonal > best ? at + (int)width + 1 : best_at;
    best = diagonal > best ? diagonal : best;
  } else {
    for (uint a = 0; a < size; ++a)
      for (uint c = 0; c < size; ++c) {
        const int at = (int)((oy * stride + a) * width + ox * stride + c);
        if (in[at] > best) best = in[at], best_at = at;
      }
  }
  y[i] = best;
  arg[i] = best_at;
}

// dx[plane][y][x] = Σ dy over the windows whose maximum was (y, x). One work-item per input row
// (plane, y): it zeroes the row, then walks the windows that cover row y in order (oy, then ox)
// and adds each window's dy at its maximum when that lies in this row — per pixel, the same
// additions in the same order as gathering them, without an integer division per element (which
// PoCL computes per work-item: 48 ms instead of a few for the reference CNN's pool).
// Each row's pixel pairs are stored as float2 (vec_type_hint: not across work-items), where lanes over
// the rows made PoCL's AVX2 code scatter them one by one (the reference CNN's pool: 6.4 ms on Zen 4,
// 2.1 in AVX-512 code; now 1.8 on both; Intel's runtime 4.1 -> 2.2).
__kernel __attribute__((vec_type_hint(float2))) void maxpool_backward(__global const float* dy, const uint dy_off,
                                                                      __global const int* arg, __global float* dx,
                                                                      const uint planes, const uint height,
                                                                      const uint width, const uint size,
                                                                      const uint stride, const uint out_h,
                                                                      const uint out_w) {
  const size_t line = get_global_id(0);  // plane·H + y
  if (line >= (size_t)planes * height) return;
  const uint yy = (uint)line % height, plane = (uint)line / height;  // the launcher checked: fits
  __global float* out = dx + line * width;
  // windows oy with oy·stride ≤ yy < oy·stride + size
  const uint oy_lo = yy + 1 > size ? (yy + 1 - size + stride - 1) / stride : 0;
  const uint oy_hi = min(yy / stride, out_h - 1);
  const int row = (int)(yy * width);
  if (size == 2 && stride == 2 && oy_lo <= oy_hi && oy_lo < out_h) {
    // The common 2×2 pool: one window covers the pixel, each pixel written once, without the
    // scattered additions below (which PoCL ran as scalar code: 3.9 ms for the reference CNN's pool,
    // now 2.2; Intel's runtime, which runs the rows as lanes, 3.4 -> 4.1, its forward 2.0 -> 1.3).
    const size_t o0 = ((size_t)plane * out_h + oy_lo) * out_w;
    for (uint ox = 0; ox < out_w; ++ox) {
      const int at = arg[o0 + ox] - row - (int)(2 * ox);
      const float g = 0.0f + dy[dy_off + o0 + ox];  // as out[at] += g on a zeroed row
      vstore2((float2)(at == 0 ? g : 0.0f, at == 1 ? g : 0.0f), ox, out);
    }
    for (uint xx = 2 * out_w; xx < width; ++xx) out[xx] = 0.0f;
    return;
  }
  for (uint xx = 0; xx < width; ++xx) out[xx] = 0.0f;
  for (uint oy = oy_lo; oy <= oy_hi && oy < out_h; ++oy) {
    const size_t o0 = ((size_t)plane * out_h + oy) * out_w;
    for (uint ox = 0; ox < out_w; ++ox) {
      const int at = arg[o0 + ox] - row;
      if (at >= 0 && at < (int)width) out[at] += dy[dy_off + o0 + ox];
    }
  }
}


// Average pooling over NCHW planes (valid windows, Keras' AveragePooling2D): y = the mean of each
// size×size window, summed in row order. y:(B·C, OH, OW); the same 3-D range as maxpool_forward.
__kernel void avgpool_forward(__global const float* x, const uint x_off, __global float* y, const uint planes,
                              const uint height, const uint width, const uint size, const uint stride,
                              const uint out_h, const uint out_w) {
  const size_t ox = get_global_id(0);
  const uint oy = get_global_id(1), plane = get_global_id(2);
  if (ox >= out_w || oy >= out_h || plane >= planes) return;
  __global const float* in = x + x_off + (size_t)plane * height * width;
  float sum = 0.0f;
  for (uint a = 0; a < size; ++a)
    for (uint c = 0; c < size; ++c) sum += in[(size_t)(oy * stride + a) * width + ox * stride + c];
  y[((size_t)plane * out_h + oy) * out_w + ox] = sum / (float)(size * size);
}

// dx[plane][y][x] = Σ dy / size² over the windows covering (y, x), gathered per input pixel (windows
// in order oy, then ox): no atomics, a fixed order. One work-item per input pixel.
__kernel void avgpool_backward(__global const float* dy, const uint dy_off, __global float* dx,
                               const uint planes, const uint height, const uint width, const uint size,
                               const uint stride, const uint out_h, const uint out_w) {
  const size_t i = get_global_id(0);
  if (i >= (size_t)planes * height * width) return;
  const uint xx = (uint)(i % width), yy = (uint)(i / width % height);
  const size_t plane = i / ((size_t)width * height);
  // windows o with o·stride ≤ p < o·stride + size
  const uint oy_lo = yy + 1 > size ? (yy + 1 - size + stride - 1) / stride : 0, oy_hi = min(yy / stride, out_h - 1);
  const uint ox_lo = xx + 1 > size ? (xx + 1 - size + stride - 1) / stride : 0, ox_hi = min(xx / stride, out_w - 1);
  float sum = 0.0f;
  for (uint oy = oy_lo; oy <= oy_hi; ++oy)
    for (uint ox = ox_lo; ox <= ox_hi; ++ox) sum += dy[dy_off + (plane * out_h + oy) * out_w + ox];
  dx[i] = sum / (float)(size * size);
}

// Global pooling (Keras' GlobalAveragePooling2D, mode 0, and GlobalMaxPooling2D, mode 1): one value
// per (sample, channel) plane of H·W pixels, y:(B, C) flat. One work-item per plane, pixels in row
// order; max keeps the first maximum's position in arg for the backward (as maxpool_forward).
__kernel void global_pool_forward(__global const float* x, const uint x_off, __global float* y,
                                  __global int* arg, const uint planes, const uint plane_size, const int mode) {
  const size_t plane = get_global_id(0);
  if (plane >= planes) return;
  __global const float* in = x + x_off + plane * plane_size;
  if (mode == 0) {
    float sum = 0.0f;
    for (uint p = 0; p < plane_size; ++p) sum += in[p];
    y[plane] = sum / (float)plane_size;
    return;
  }
  float best = in[0];
  int best_at = 0;
  for (uint p = 1; p < plane_size; ++p)
    if (in[p] > best) best = in[p], best_at = (int)p;
  y[plane] = best;
  arg[plane] = best_at;
}

// dx:(B·C, H·W): dy of the pixel's plane / H·W (mode 0), or dy where the plane's maximum was and 0
// elsewhere (mode 1). One work-item per input pixel.
__kernel void global_pool_backward(__global const float* dy, const uint dy_off, __global const int* arg,
                                   __global float* dx, const uint planes, const uint plane_size, const int mode) {
  const size_t i = get_global_id(0);
  if (i >= (size_t)planes * plane_size) return;
  const size_t plane = i / plane_size;
  const float g = dy[dy_off + plane];
  dx[i] = mode == 0 ? g / (float)plane_size : ((uint)(i % plane_size) == (uint)arg[plane] ? g : 0.0f);
}
