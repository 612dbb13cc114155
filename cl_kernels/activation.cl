// Bias + activation, fused so the GEMM output is read and written once per pass.
// act: 0 linear, 1 relu, 2 tanh, 3 sigmoid (matches anycl::Activation; activate() is in common.cl).
// y:(rows,cols) row-major with element offset; bias:(cols) at bias_off. Element indices are 64-bit.

// y = act(y + bias), in place.
__kernel void bias_activation_forward(__global float* y, const uint y_off, __global const float* bias,
                                      const uint bias_off, const uint rows, const uint cols, const int act) {
  const size_t i = get_global_id(0);  // 64-bit: rows·cols and offsets may pass 2^32
  if (i >= (size_t)rows * cols) return;
  const size_t j = i % cols;
  y[y_off + i] = activate(y[y_off + i] + bias[bias_off + j], act);
}

// dz = dy·act'(y) written over dy, and dbias[j] = Σ_rows dz — the bias gradient's reduction fused
// into the same pass. A work-group of BC columns × BR row lanes: lane l sums rows l, l+BR, … of its
// column (reads coalesced along the row), then the lanes' sums are added in a fixed tree, so the
// result is deterministic and every row is read by BR work-items at once (one work-item per column
// left a small layer's columns, e.g. 10 classes, to one work-item each over the whole batch).
#ifndef BC
#define BC 32
#endif
#ifndef BR
#define BR 8
#endif
#if BR < 1 || (BR & (BR - 1)) != 0
#error "bias_activation_backward: BR must be a power of two (the tree reduction halves it)"
#endif

__kernel __attribute__((reqd_work_group_size(BC, BR, 1)))
void bias_activation_backward(__global const float* y, const uint y_off, __global float* dy,
                              const uint dy_off, __global float* dbias, const uint dbias_off,
                              const uint rows, const uint cols, const int act) {
  __local float part[BR][BC];
  const uint lc = get_local_id(0), lr = get_local_id(1);
  const size_t j = get_group_id(0) * BC + lc;
  float sum = 0.0f;
  // The loop bounds are the same for every work-item (the row is r0 + lr), which lets a CPU compiler
  // (PoCL) run the work-items as the inner, vectorised loop.
  for (size_t r0 = 0; r0 < rows; r0 += BR) {
    const size_t r = r0 + lr, i = r * cols + j;  // 64-bit: rows·cols may pass 2^32
    if (r < rows && j < cols) {
      const float dz = dy[dy_off + i] * activate_grad_from_output(y[y_off + i], act);
      dy[dy_off + i] = dz;
      sum += dz;
    }
  }
  part[lr][lc] = sum;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint stride = BR / 2; stride > 0; stride /= 2) {
    if (lr < stride) part[lr][lc] += part[lr + stride][lc];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lr == 0 && j < cols) dbias[dbias_off + j] = part[0][lc];
}

// Per channel, for convolutions over NCHW: y:(B,F,P) with P = OH·OW, bias:(F).
// y = act(y + bias[channel]) in place, y:(B,F,P) at y_off.
__kernel void channel_bias_activation_forward(__global float* y, const uint y_off, __global const float* bias,
                                              const uint bias_off, const uint batch, const uint filters,
                                              const uint plane, const int act) {
  const size_t i = get_global_id(0);
  if (i >= (size_t)batch * filters * plane) return;
  const size_t f = (i / plane) % filters;
  y[y_off + i] = activate(y[y_off + i] + bias[bias_off + f], act);
}
