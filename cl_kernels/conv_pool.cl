// A convolution's output-stage backward fused with the MaxPool2D right after it (Sequential links the two
// where the pool's windows do not overlap, on every CPU driver; ConvOps::pooled_output_backward). In place
// of maxpool_backward (pool.cl: dy routed to each window's argmax in a full-size gradient, zeros elsewhere)
// then conv_output_backward_rows_<activation> (conv.cl: that gradient times act'(y), channel-major), one
// pass writes the channel-major dz:(F, batch·H·W) from the pooled gradient: at each window's argmax
// (0 + dy_pool)·act'(the window's maximum), zeros elsewhere, pixels in no window included. The maximum is
// y at the argmax, so these are the two passes' bits; what is not read any more is the full-size
// gradient (written, then read) and y (the reference CNN's conv 2: 19 MB each, 2.7 ms on PoCL for the two
// passes). Shapes: pooled and dy_pool:(batch, F, OH, OW), arg (i32) each window's argmax in its plane
// (maxpool_forward's), the pool's windows size × size moved by size over the layer's H × W output.

// One work-item per row (b, f) of the layer's output (f·batch + b of dz), writing its plane row by row (a
// window's value computed on each of its rows: storing two rows at a time ran 15 % slower on PoCL), and the
// plane's sum at row_sums[b·F + f] (conv_bias_from_rows adds them up per channel, as after
// conv_output_backward_rows).
static inline void conv_output_backward_pooled_row(
    const uint row, __global const float* restrict pooled, __global const int* restrict arg,
    __global const float* restrict dy, const uint dy_off, __global float* restrict dcf,
    __global float* restrict row_sums, const uint batch, const uint filters, const uint height,
    const uint width, const uint size, const uint out_h, const uint out_w, const int act) {
  if (row >= batch * filters) return;
  const uint f = row % filters, b = row / filters;
  const size_t windows = (size_t)row * out_h * out_w;  // this plane's first window
  __global float* out = dcf + ((size_t)f * batch + b) * height * width;
  float sum = 0.0f;
  for (uint yy = 0; yy < height; ++yy) {
    __global float* line = out + (size_t)yy * width;
    const uint oy = yy / size;
    uint xx = 0;
    if (oy < out_h) {
      const size_t o0 = windows + (size_t)oy * out_w;
      const int at_row = (int)(yy * width);
      if (size == 2) {  // the common 2×2 pool: a window's two columns stored together
        for (uint ox = 0; ox < out_w; ++ox) {
          const int at = arg[o0 + ox] - at_row - (int)(2 * ox);  // 0 or 1 on the argmax's row
          const float g = (0.0f + dy[dy_off + o0 + ox]) * activate_grad(pooled[o0 + ox], act);
          vstore2((float2)(at == 0 ? g : 0.0f, at == 1 ? g : 0.0f), ox, line);
          if (at == 0 || at == 1) sum += g;
        }
      } else {
        for (uint ox = 0; ox < out_w; ++ox) {
          const int at = arg[o0 + ox] - at_row - (int)(size * ox);  // in [0, size) on the argmax's row
          const float g = (0.0f + dy[dy_off + o0 + ox]) * activate_grad(pooled[o0 + ox], act);
          for (uint j = 0; j < size; ++j) line[size * ox + j] = at == (int)j ? g : 0.0f;
          if (at >= 0 && at < (int)size) sum += g;
        }
      }
      xx = size * out_w;
    }
    for (; xx < width; ++xx) line[xx] = 0.0f;  // in no window
  }
  row_sums[row] = sum;
}

// One kernel per activation whose derivative comes from the output (not gelu, which keeps its input z: a
// layer with gelu is not fused).
#define CONV_POOL_KERNELS(NAME, ACT)                                                                       \
  __kernel __attribute__((vec_type_hint(float2))) void conv_output_backward_pooled_##NAME(                 \
      __global const float* pooled, __global const int* arg, __global const float* dy, const uint dy_off,  \
      __global float* dcf, __global float* row_sums, const uint batch, const uint filters,                 \
      const uint height, const uint width, const uint size, const uint out_h, const uint out_w) {          \
    conv_output_backward_pooled_row((uint)get_global_id(0), pooled, arg, dy, dy_off, dcf, row_sums, batch, \
                                    filters, height, width, size, out_h, out_w, ACT);                      \
  }
CONV_POOL_KERNELS(linear, 0)
CONV_POOL_KERNELS(relu, 1)
CONV_POOL_KERNELS(tanh, 2)
CONV_POOL_KERNELS(sigmoid, 3)
CONV_POOL_KERNELS(leaky_relu, 4)
CONV_POOL_KERNELS(elu, 5)
