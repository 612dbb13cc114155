// Max pooling over NCHW planes (valid windows): the forward keeps the position of each window's
// maximum (the first one on ties) so the backward routes the gradient there. The backward gathers
// per input pixel, so overlapping windows need no atomics and the order is fixed.

// y:(B·C, OH, OW), arg: index y·W+x of the max within its input plane.
__kernel void maxpool_forward(__global const float* x, const uint x_off, __global float* y,
                              __global int* arg, const uint planes, const uint height, const uint width,
                              const uint size, const uint stride, const uint out_h, const uint out_w) {
  const size_t ox = get_global_id(0);  // x: the column (size_t: see conv.cl), y: the row plane·OH + oy
  const uint line = get_global_id(1);
  if (ox >= out_w || line >= planes * out_h) return;
  const uint oy = line % out_h, plane = line / out_h;
  const size_t i = (size_t)line * out_w + ox;
  __global const float* in = x + x_off + (size_t)plane * height * width;
  int best_at = (int)(oy * stride * width + ox * stride);
  float best = in[best_at];
  for (uint a = 0; a < size; ++a)
    for (uint c = 0; c < size; ++c) {
      const int at = (int)((oy * stride + a) * width + ox * stride + c);
      if (in[at] > best) best = in[at], best_at = at;
    }
  y[i] = best;
  arg[i] = best_at;
}

// dx[plane][y][x] = Σ dy over the windows whose maximum was (y, x). One work-item per input row
// (plane, y): it zeroes the row, then walks the windows that cover row y in order (oy, then ox)
// and adds each window's dy at its maximum when that lies in this row — per pixel, the same
// additions in the same order as gathering them, without an integer division per element (which
// PoCL computes per work-item: 48 ms instead of a few for the reference CNN's pool).
__kernel void maxpool_backward(__global const float* dy, const uint dy_off, __global const int* arg,
                               __global float* dx, const uint planes, const uint height, const uint width,
                               const uint size, const uint stride, const uint out_h, const uint out_w) {
  const size_t line = get_global_id(0);  // plane·H + y
  if (line >= (size_t)planes * height) return;
  const uint yy = (uint)line % height, plane = (uint)line / height;  // the launcher checked: fits
  __global float* out = dx + line * width;
  for (uint xx = 0; xx < width; ++xx) out[xx] = 0.0f;
  // windows oy with oy·stride ≤ yy < oy·stride + size
  const uint oy_lo = yy + 1 > size ? (yy + 1 - size + stride - 1) / stride : 0;
  const uint oy_hi = min(yy / stride, out_h - 1);
  const int row = (int)(yy * width);
  for (uint oy = oy_lo; oy <= oy_hi && oy < out_h; ++oy) {
    const size_t o0 = ((size_t)plane * out_h + oy) * out_w;
    for (uint ox = 0; ox < out_w; ++ox) {
      const int at = arg[o0 + ox] - row;
      if (at >= 0 && at < (int)width) out[at] += dy[dy_off + o0 + ox];
    }
  }
}
