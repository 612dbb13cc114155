// Max pooling over NCHW planes (valid windows): the forward keeps the position of each window's
// maximum (the first one on ties) so the backward routes the gradient there. The backward gathers
// per input pixel, so overlapping windows need no atomics and the order is fixed.

// y:(B·C, OH, OW), arg: index y·W+x of the max within its input plane.
__kernel void maxpool_forward(__global const float* x, const uint x_off, __global float* y,
                              __global int* arg, const uint planes, const uint height, const uint width,
                              const uint size, const uint stride, const uint out_h, const uint out_w) {
  const uint ox = get_global_id(0), line = get_global_id(1);  // x: the column, y: the row plane·OH + oy
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

// dx[plane][y][x] = Σ dy over the windows whose maximum was (y, x).
__kernel void maxpool_backward(__global const float* dy, const uint dy_off, __global const int* arg,
                               __global float* dx, const uint planes, const uint height, const uint width,
                               const uint size, const uint stride, const uint out_h, const uint out_w) {
  const uint xx = get_global_id(0), line = get_global_id(1);  // x: the column, y: the row plane·H + y
  if (xx >= width || line >= planes * height) return;
  const uint yy = line % height, plane = line / height;
  const size_t i = (size_t)line * width + xx;
  const int here = (int)(yy * width + xx);
  // windows oy with oy·stride ≤ yy < oy·stride + size
  const uint oy_lo = yy + 1 > size ? (yy + 1 - size + stride - 1) / stride : 0;
  const uint ox_lo = xx + 1 > size ? (xx + 1 - size + stride - 1) / stride : 0;
  const uint oy_hi = min(yy / stride, out_h - 1), ox_hi = min(xx / stride, out_w - 1);
  float sum = 0.0f;
  for (uint oy = oy_lo; oy <= oy_hi && oy < out_h; ++oy)
    for (uint ox = ox_lo; ox <= ox_hi && ox < out_w; ++ox) {
      const size_t o = ((size_t)plane * out_h + oy) * out_w + ox;
      if (arg[o] == here) sum += dy[dy_off + o];
    }
  dx[i] = sum;
}
