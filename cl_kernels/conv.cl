// Convolution helpers around CLBlast's GEMMs, NCHW: a batched im2col and its adjoint col2im, and
// a sum over the batch of per-sample weight gradients (the per-channel bias + activation lives in
// activation.cl).
// Shapes: x:(B,C,H,W); col:(B, C·KH·KW, OH·OW) with row (c·KH + i)·KW + j; y:(B,F,OH·OW).

// col[b][(c,i,j)][oy·OW+ox] = x[b][c][oy·s−pt+i][ox·s−pl+j], 0 outside the image.
__kernel void im2col_batched(__global const float* x, const uint x_off, __global float* col, const uint batch,
                             const uint channels, const uint height, const uint width, const uint kh,
                             const uint kw, const uint stride, const uint pad_top, const uint pad_left,
                             const uint out_h, const uint out_w) {
  const size_t i = get_global_id(0);
  const size_t p_count = (size_t)out_h * out_w, k_count = (size_t)channels * kh * kw;
  if (i >= (size_t)batch * k_count * p_count) return;
  const size_t p = i % p_count, k = (i / p_count) % k_count, b = i / (p_count * k_count);
  const uint ox = (uint)(p % out_w), oy = (uint)(p / out_w);
  const uint kj = (uint)(k % kw), ki = (uint)((k / kw) % kh), c = (uint)(k / ((size_t)kw * kh));
  const int y = (int)(oy * stride + ki) - (int)pad_top, xx = (int)(ox * stride + kj) - (int)pad_left;
  float v = 0.0f;
  if (y >= 0 && y < (int)height && xx >= 0 && xx < (int)width)
    v = x[x_off + ((b * channels + c) * height + (size_t)y) * width + (size_t)xx];
  col[i] = v;
}

// The adjoint of im2col, gathered (no atomics, a fixed order): dx[b][c][y][x] = Σ over the
// (i, j, oy, ox) that read pixel (y, x) of dcol at that position.
__kernel void col2im_batched(__global const float* col, __global float* dx, const uint batch,
                             const uint channels, const uint height, const uint width, const uint kh,
                             const uint kw, const uint stride, const uint pad_top, const uint pad_left,
                             const uint out_h, const uint out_w) {
  const size_t i = get_global_id(0);
  if (i >= (size_t)batch * channels * height * width) return;
  const uint xx = (uint)(i % width), y = (uint)((i / width) % height);
  const size_t bc = i / ((size_t)width * height);
  const uint c = (uint)(bc % channels);
  const size_t b = bc / channels;
  const size_t p_count = (size_t)out_h * out_w, k_count = (size_t)channels * kh * kw;
  __global const float* base = col + b * k_count * p_count;
  float sum = 0.0f;
  for (uint ki = 0; ki < kh; ++ki) {
    const int ty = (int)(y + pad_top) - (int)ki;
    if (ty < 0 || ty % (int)stride != 0) continue;
    const uint oy = (uint)ty / stride;
    if (oy >= out_h) continue;
    for (uint kj = 0; kj < kw; ++kj) {
      const int tx = (int)(xx + pad_left) - (int)kj;
      if (tx < 0 || tx % (int)stride != 0) continue;
      const uint ox = (uint)tx / stride;
      if (ox >= out_w) continue;
      sum += base[(((size_t)c * kh + ki) * kw + kj) * p_count + (size_t)oy * out_w + ox];
    }
  }
  dx[i] = sum;
}

// out[j] = Σ_b parts[b·n + j], in order of b (deterministic).
__kernel void sum_over_batch(__global const float* parts, __global float* out, const uint out_off,
                             const uint batch, const uint n) {
  const size_t j = get_global_id(0);
  if (j >= n) return;
  float sum = 0.0f;
  for (size_t b = 0; b < batch; ++b) sum += parts[b * n + j];
  out[out_off + j] = sum;
}
