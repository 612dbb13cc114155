// Convolution as whole-batch GEMMs over NCHW tensors (the GEMMs themselves are CLBlast's):
// im2col into a channel-major column matrix, its adjoint col2im, and the layer's output stage
// (bias + activation while reordering channel-major GEMM results back to NCHW) with its backward.
// Shapes: x:(B,C,H,W); col:(C·KH·KW, B·OH·OW) with row (c·KH + i)·KW + j and column b·P + p,
// P = OH·OW; the channel-major GEMM result cf:(F, B·P); y:(B,F,P).

// col[(c,i,j)][b·P + oy·OW+ox] = x[b][c][oy·s−pt+i][ox·s−pl+j], 0 outside the image. One
// work-item per output row ((c,i,j)·B + b, oy), looping over ox: the row's index arithmetic (five
// integer divisions) is done once per row, not per element — per element, PoCL computed them for
// every work-item and im2col ran ~10× slower (150 vs 16 ms for 21M elements).
__kernel void im2col_batched(__global const float* x, const uint x_off, __global float* col, const uint batch,
                             const uint channels, const uint height, const uint width, const uint kh,
                             const uint kw, const uint stride, const uint pad_top, const uint pad_left,
                             const uint out_h, const uint out_w) {
  const size_t line = get_global_id(0);
  if (line >= (size_t)batch * channels * kh * kw * out_h) return;
  const uint l = (uint)line, oy = l % out_h, r = l / out_h, b = r % batch, k = r / batch;  // launcher: fits
  const uint kj = k % kw, ki = (k / kw) % kh, c = k / (kw * kh);
  const int y = (int)(oy * stride + ki) - (int)pad_top;
  __global float* out = col + line * out_w;
  if (y < 0 || y >= (int)height) {
    for (uint ox = 0; ox < out_w; ++ox) out[ox] = 0.0f;
    return;
  }
  __global const float* in = x + x_off + (((size_t)b * channels + c) * height + (uint)y) * width;
  for (uint ox = 0; ox < out_w; ++ox) {
    const int xx = (int)(ox * stride + kj) - (int)pad_left;
    out[ox] = xx >= 0 && xx < (int)width ? in[xx] : 0.0f;
  }
}

// The same patches as rows of `ld` ≥ C·KH·KW floats, for the weight gradient's GEMM:
// colt[b·P + oy·OW+ox][(c,i,j)] = x[b][c][oy·s−pt+i][ox·s−pl+j], 0 outside the image. A row's
// padding after the patch is not written: the caller zeroes it once per buffer (rewriting it every
// step was a quarter of the reference CNN's conv 2 stores on AVX2, 288 of 384). One work-item per
// output pixel, writing its patch contiguously (8.9 ms for the reference CNN's 21M elements on
// PoCL, where CLBlast's transpose of im2col's matrix took 76 ms).
__kernel void im2row_batched(__global const float* x, const uint x_off, __global float* colt, const uint batch,
                             const uint channels, const uint height, const uint width, const uint kh,
                             const uint kw, const uint stride, const uint pad_top, const uint pad_left,
                             const uint out_h, const uint out_w, const uint ld) {
  const size_t pixel = get_global_id(0);
  if (pixel >= (size_t)batch * out_h * out_w) return;
  const uint q = (uint)pixel, ox = q % out_w, oy = (q / out_w) % out_h, b = q / (out_w * out_h);  // fits
  __global float* out = colt + pixel * (size_t)ld;
  __global const float* in = x + x_off + (size_t)b * channels * height * width;
  uint k = 0;
  for (uint c = 0; c < channels; ++c)
    for (uint ki = 0; ki < kh; ++ki) {
      const int y = (int)(oy * stride + ki) - (int)pad_top;
      for (uint kj = 0; kj < kw; ++kj, ++k) {
        const int xx = (int)(ox * stride + kj) - (int)pad_left;
        out[k] = y >= 0 && y < (int)height && xx >= 0 && xx < (int)width
                     ? in[((size_t)c * height + (uint)y) * width + (uint)xx]
                     : 0.0f;
      }
    }
}

// The adjoint of im2col, gathered (no atomics, a fixed order): dx[b][c][y][x] = Σ over the
// (i, j, oy, ox) that read pixel (y, x) of dcol at that position. A 2-D range: x over the pixel's
// column, y over the rows (b·C + c)·H + y; stride 1 (the common case) skips the divisibility tests.
__kernel void col2im_batched(__global const float* col, __global float* dx, const uint batch,
                             const uint channels, const uint height, const uint width, const uint kh,
                             const uint kw, const uint stride, const uint pad_top, const uint pad_left,
                             const uint out_h, const uint out_w) {
  const uint xx = get_global_id(0), line = get_global_id(1);
  const uint y = line % height, bc = line / height, c = bc % channels, b = bc / channels;
  if (xx >= width || b >= batch) return;
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
      const int tx = (int)(xx + pad_left) - (int)kj;
      if (stride == 1) {
        if (tx >= 0 && tx < (int)out_w) sum += plane[kj * row + (uint)tx];
      } else if (tx >= 0 && tx % (int)stride == 0 && (uint)tx / stride < out_w) {
        sum += plane[kj * row + (uint)tx / stride];
      }
    }
  }
  dx[(size_t)line * width + xx] = sum;
}

// y[b][f][p] = act(cf[f][b·P + p] + bias[f]): the channel-major GEMM result back to NCHW, with the
// bias and activation (common.cl) in the same pass. A 2-D range: x over p, y over the rows b·F + f.
__kernel void conv_output_forward(__global const float* cf, __global float* y, const uint y_off,
                                  __global const float* bias, const uint bias_off, const uint batch,
                                  const uint filters, const uint plane, const int act) {
  const uint p = get_global_id(0), row = get_global_id(1);
  const uint f = row % filters, b = row / filters;
  if (p >= plane || b >= batch) return;
  y[y_off + (size_t)row * plane + p] =
      activate(cf[((size_t)f * batch + b) * plane + p] + bias[bias_off + f], act);
}

// The backward of conv_output_forward: dz = dy·act'(y) from NCHW into the channel-major dcf:(F, B·P),
// the same 2-D range (x over p, y over the rows b·F + f). conv_bias_backward then sums dcf's rows.
// (One work-group per channel doing both, its lanes looping over the samples, took 10.3 ms for
// the reference CNN's conv 2 on PoCL's AVX2 class, where this pass moves 57 MB.)
__kernel void conv_output_backward(__global const float* y, const uint y_off, __global const float* dy,
                                   const uint dy_off, __global float* dcf, const uint batch,
                                   const uint filters, const uint plane, const int act) {
  const uint p = get_global_id(0), row = get_global_id(1);
  const uint f = row % filters, b = row / filters;
  if (p >= plane || b >= batch) return;
  const size_t in = (size_t)row * plane + p;
  dcf[((size_t)f * batch + b) * plane + p] = dy[dy_off + in] * activate_grad_from_output(y[y_off + in], act);
}

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
  const uint f = get_global_id(0);
  const size_t first = (size_t)get_global_id(1) * DZ_ROWS_RUN;
  if (f >= ld || first >= count) return;
  __global float* out = rows + first * ld + f;
  __global const float* in = dcf + (size_t)(f < filters ? f : 0) * count + first;
  for (uint i = 0; i < DZ_ROWS_RUN && first + i < count; ++i) out[(size_t)i * ld] = f < filters ? in[i] : 0.0f;
}

// The weight gradient from its slices: dw[f][j] = Σ_s parts[s][f][j] (s in order: deterministic),
// parts[s] a (rows ≥ filters) × ld matrix at s·slice_stride, dw a filters × cols one at dw_off.
// A 2-D range: x over j, y over f.
__kernel void conv_sum_slices(__global const float* parts, const uint slices, const uint slice_stride,
                              const uint ld, __global float* dw, const uint dw_off, const uint filters,
                              const uint cols) {
  const uint j = get_global_id(0), f = get_global_id(1);
  if (j >= cols || f >= filters) return;
  __global const float* in = parts + (size_t)f * ld + j;
  float sum = 0.0f;
  for (uint s = 0; s < slices; ++s) sum += in[(size_t)s * slice_stride];
  dw[dw_off + (size_t)f * cols + j] = sum;
}
