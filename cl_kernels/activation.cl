// Bias + activation, fused so the GEMM output is read and written once per pass.
// act: 0 linear … 6 gelu (matches anycl::Activation; activate() is in common.cl). A gelu layer also
// keeps z = y + bias before the activation (keep_z: written to z at z_off, same layout as y), which its
// backward needs (common.cl's activate_grad). y:(rows,cols) row-major with element offset; bias:(cols)
// at bias_off. Element indices are 64-bit.

// y = act(y + bias), in place. Sixteen elements per work-item: one vector load and store where
// they lie in one row, element by element where they cross a row's end or the tensor's. On PoCL,
// 128x512 took 0.018 ms instead of 0.11 ms with one element per work-item, whose 64-bit i % cols
// per element the CPU compiler could not vectorise (2 loaded vCPUs, same sitting).
__kernel void bias_activation_forward(__global float* y, const uint y_off, __global const float* bias,
                                      const uint bias_off, const uint rows, const uint cols, const int act,
                                      __global float* z, const uint z_off, const int keep_z) {
  const size_t i0 = 16 * get_global_id(0), n = (size_t)rows * cols;  // 64-bit: may pass 2^32
  if (i0 >= n) return;
  if (!keep_z) {
    bias_activation16(y + y_off, bias + bias_off, i0, n, cols, act);  // common.cl
    return;
  }
  size_t j = i0 % cols;  // gelu: also keep z = y + bias
  if (i0 + 16 <= n && j + 16 <= cols) {
    const float16 v = vload16(0, y + y_off + i0) + vload16(0, bias + bias_off + j);
    if (keep_z) vstore16(v, 0, z + z_off + i0);
    vstore16(activate16(v, act), 0, y + y_off + i0);
    return;
  }
  for (size_t i = i0; i < min(i0 + 16, n); ++i) {
    const float v = y[y_off + i] + bias[bias_off + j];
    if (keep_z) z[z_off + i] = v;
    y[y_off + i] = activate(v, act);
    if (++j == cols) j = 0;
  }
}

// y = act(x·W + bias) for ONE row x (inference at batch 1), the product fused with the bias and
// activation: a GEMM would pad the row to a whole tile (MWG rows on PoCL: 1 of 128 used). Work-item
// g forms outputs 16g..16g+15 as float16 multiply-adds over i in order from zero, so each output is
// the same sum in the same order as CLBlast's GEMM and GEMV kernels form it (one multiply-add per
// term), then adds the bias and activates as bias_activation_forward does on a one-row y: the bits
// of a batch-N forward (tests/test_prediction.cpp checks them). x:(k) at x_off, W:(k,cols)
// row-major at w_off, bias:(cols), y:(cols). 1.6 MB of W streams once; no local memory.
__kernel void dense_row_forward(__global const float* x, const uint x_off, __global const float* w,
                                const uint w_off, __global const float* bias, const uint bias_off,
                                __global float* y, const uint y_off, const uint k, const uint cols,
                                const int act) {
  const size_t j0 = 16 * (size_t)get_global_id(0);
  if (j0 >= cols) return;
  if (j0 + 16 <= cols) {
    float16 acc = (float16)(0.0f);
    for (uint i = 0; i < k; ++i) acc += x[x_off + i] * vload16(0, w + w_off + (size_t)i * cols + j0);
    vstore16(activate16(acc + vload16(0, bias + bias_off + j0), act), 0, y + y_off + j0);
    return;
  }
  for (size_t j = j0; j < cols; ++j) {
    float acc = 0.0f;
    for (uint i = 0; i < k; ++i) acc += x[x_off + i] * w[w_off + (size_t)i * cols + j];
    y[y_off + j] = activate(acc + bias[bias_off + j], act);
  }
}

// dz = dy·act'(y) written over dy (y: what the layer kept, its output, or z for gelu), and dbias[j] = Σ_rows dz — the bias gradient's reduction fused
// into the same pass. A work-group of BC columns × BR row lanes: lane l sums rows l, l+BR, … of its
// column (reads coalesced along the row), then the lanes' sums are added in a fixed tree, so the
// result is deterministic and every row is read by BR work-items at once (one work-item per column
// left a small layer's columns, e.g. 10 classes, to one work-item each over the whole batch).
// The default 8 × 16 is PoCL's fastest of those measured for 128×512 (0.05 ms; 32 × 8: 0.12 ms,
// 16 × 16: 0.12 ms, 4 × 32: 0.07 ms); the launcher asks for 32 × 8 on a GPU and 32 × 4 on a CPU
// runtime that vectorizes across work-items (Intel's).
#ifndef BC
#define BC 8
#endif
#ifndef BR
#define BR 16
#endif
#if BR < 1 || (BR & (BR - 1)) != 0
#error "bias_activation_backward: BR must be a power of two (the tree reduction halves it)"
#endif

// The body of both kernels below: with `keep`, dy is first multiplied by the dropout mask the layer
// after stored (keep[i] ? scale : 0), as dropout_backward_kept does, in the same order, so the fused
// pass gives the bits of the two launches.
static inline void bias_activation_backward_body(__global const float* y, __global float* dy,
                                                 __global const uchar* keep, const float scale,
                                                 __global float* dbias, const uint rows, const uint cols,
                                                 const int act, __local float* part) {
  const uint lc = get_local_id(0), lr = get_local_id(1);
  const size_t j = get_group_id(0) * BC + lc;
  float sum = 0.0f;
  // The loop bounds are the same for every work-item (the row is r0 + lr), which lets a CPU compiler
  // (PoCL) run the work-items as the inner, vectorised loop.
  for (size_t r0 = 0; r0 < rows; r0 += BR) {
    const size_t r = r0 + lr, i = r * cols + j;  // 64-bit: rows·cols may pass 2^32
    if (r < rows && j < cols) {
      float d = dy[i];
      if (keep) d *= keep[i] ? scale : 0.0f;
      const float dz = d * activate_grad(y[i], act);
      dy[i] = dz;
      sum += dz;
    }
  }
  part[lr * BC + lc] = sum;  // part: BR rows of BC lanes' sums
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint stride = BR / 2; stride > 0; stride /= 2) {
    if (lr < stride) part[lr * BC + lc] += part[(lr + stride) * BC + lc];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lr == 0 && j < cols) dbias[j] = part[lc];
}

__kernel __attribute__((reqd_work_group_size(BC, BR, 1)))
void bias_activation_backward(__global const float* y, const uint y_off, __global float* dy,
                              const uint dy_off, __global float* dbias, const uint dbias_off,
                              const uint rows, const uint cols, const int act) {
  __local float part[BR * BC];
  bias_activation_backward_body(y + y_off, dy + dy_off, 0, 1.0f, dbias + dbias_off, rows, cols, act, part);
}

// The same for a Dense layer whose Dropout's backward is fused in: dy·mask·scale first, the mask
// read from what the forward stored (dropout.cl's bias_activation_dropout_forward), one launch
// instead of two.
__kernel __attribute__((reqd_work_group_size(BC, BR, 1)))
void bias_activation_dropout_backward(__global const float* y, const uint y_off, __global float* dy,
                                      const uint dy_off, __global const uchar* keep, const uint keep_off,
                                      const float scale, __global float* dbias, const uint dbias_off,
                                      const uint rows, const uint cols, const int act) {
  __local float part[BR * BC];
  bias_activation_backward_body(y + y_off, dy + dy_off, keep + keep_off, scale, dbias + dbias_off, rows, cols,
                                act, part);
}

// The same two passes for PoCL's CPU driver (Runtime::row_kernels), which runs a work-group's items
// as a loop and pays for each barrier of the tree above (the reference MLP's 128×512: 0.16–0.19 ms
// on Zen 4): one work-item per run of eight columns, walking the rows in order with the columns in
// float8 lanes (a last, shorter run column by column), no local memory. dbias[j] sums column j's
// rows in row order: deterministic, the same bits whichever of the two kernels runs.
static inline void bias_activation_backward_run(__global const float* y, __global float* dy,
                                                __global const uchar* keep, const float scale,
                                                __global float* dbias, const uint rows, const uint cols,
                                                const int act) {
  const size_t j0 = get_global_id(0) * 8;
  if (j0 >= cols) return;
  if (j0 + 8 <= cols) {
    float8 sum = (float8)(0.0f);
    for (size_t r = 0; r < rows; ++r) {
      const size_t i = r * cols + j0;  // 64-bit: rows·cols may pass 2^32
      float8 d = vload8(0, dy + i);
      if (keep) d *= select((float8)(0.0f), (float8)(scale), convert_int8(vload8(0, keep + i)) != (int8)(0));
      const float8 k = vload8(0, y + i);
      const float8 dz = d * (float8)(activate_grad(k.s0, act), activate_grad(k.s1, act), activate_grad(k.s2, act),
                                     activate_grad(k.s3, act), activate_grad(k.s4, act), activate_grad(k.s5, act),
                                     activate_grad(k.s6, act), activate_grad(k.s7, act));
      vstore8(dz, 0, dy + i);
      sum += dz;
    }
    vstore8(sum, 0, dbias + j0);
    return;
  }
  for (size_t j = j0; j < cols; ++j) {
    float sum = 0.0f;
    for (size_t r = 0; r < rows; ++r) {
      const size_t i = r * cols + j;
      float d = dy[i];
      if (keep) d *= keep[i] ? scale : 0.0f;
      const float dz = d * activate_grad(y[i], act);
      dy[i] = dz;
      sum += dz;
    }
    dbias[j] = sum;
  }
}

__kernel __attribute__((vec_type_hint(float8))) void bias_activation_backward_runs(
    __global const float* y, const uint y_off, __global float* dy, const uint dy_off, __global float* dbias,
    const uint dbias_off, const uint rows, const uint cols, const int act) {
  bias_activation_backward_run(y + y_off, dy + dy_off, 0, 1.0f, dbias + dbias_off, rows, cols, act);
}

__kernel __attribute__((vec_type_hint(float8))) void bias_activation_dropout_backward_runs(
    __global const float* y, const uint y_off, __global float* dy, const uint dy_off, __global const uchar* keep,
    const uint keep_off, const float scale, __global float* dbias, const uint dbias_off, const uint rows,
    const uint cols, const int act) {
  bias_activation_backward_run(y + y_off, dy + dy_off, keep + keep_off, scale, dbias + dbias_off, rows, cols,
                               act);
}

// Per channel, for convolutions over NCHW: y:(B,F,P) with P = OH·OW, bias:(F).
// y = act(y + bias[channel]) in place, y:(B,F,P) at y_off; z = y + bias[channel] when keep_z (gelu).
__kernel void channel_bias_activation_forward(__global float* y, const uint y_off, __global const float* bias,
                                              const uint bias_off, const uint batch, const uint filters,
                                              const uint plane, const int act, __global float* z,
                                              const uint z_off, const int keep_z) {
  const size_t i = get_global_id(0);
  if (i >= (size_t)batch * filters * plane) return;
  const size_t f = (i / plane) % filters;
  const float v = y[y_off + i] + bias[bias_off + f];
  if (keep_z) z[z_off + i] = v;
  y[y_off + i] = activate(v, act);
}
