// Bias + activation, fused so the GEMM output is read and written once per pass.
// act: 0 linear, 1 relu, 2 tanh, 3 sigmoid (matches anycl::Activation).
// y:(rows,cols) row-major with element offset; bias:(cols) at bias_off. Element indices are 64-bit.

static inline float activate(const float z, const int act) {
  switch (act) {
    case 1: return fmax(z, 0.0f);
    case 2: return tanh(z);
    case 3: return 1.0f / (1.0f + exp(-z));
    default: return z;
  }
}

// The derivative expressed through the activation's output y, so the forward input need not be kept.
static inline float activate_grad_from_output(const float y, const int act) {
  switch (act) {
    case 1: return y > 0.0f ? 1.0f : 0.0f;
    case 2: return 1.0f - y * y;
    case 3: return y * (1.0f - y);
    default: return 1.0f;
  }
}

// y = act(y + bias), in place.
__kernel void bias_activation_forward(__global float* y, const uint y_off, __global const float* bias,
                                      const uint bias_off, const uint rows, const uint cols, const int act) {
  const size_t i = get_global_id(0);  // 64-bit: rows·cols and offsets may pass 2^32
  if (i >= (size_t)rows * cols) return;
  const size_t j = i % cols;
  y[y_off + i] = activate(y[y_off + i] + bias[bias_off + j], act);
}

// One work-item per column: dz = dy·act'(y) written over dy, and dbias[j] = Σ_rows dz — the
// bias gradient's reduction fused into the same pass. Rows are summed in order: deterministic.
__kernel void bias_activation_backward(__global const float* y, const uint y_off, __global float* dy,
                                       const uint dy_off, __global float* dbias, const uint dbias_off,
                                       const uint rows, const uint cols, const int act) {
  const size_t j = get_global_id(0);
  if (j >= cols) return;
  float sum = 0.0f;
  for (size_t r = 0; r < rows; ++r) {
    const size_t i = r * cols + j;
    const float dz = dy[dy_off + i] * activate_grad_from_output(y[y_off + i], act);
    dy[dy_off + i] = dz;
    sum += dz;
  }
  dbias[dbias_off + j] = sum;
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

// One work-item per channel: dz = dy·act'(y) over dy, dbias[f] = Σ_{b,p} dz in a fixed order.
__kernel void channel_bias_activation_backward(__global const float* y, const uint y_off, __global float* dy,
                                               const uint dy_off, __global float* dbias, const uint dbias_off,
                                               const uint batch, const uint filters, const uint plane,
                                               const int act) {
  const size_t f = get_global_id(0);
  if (f >= filters) return;
  float sum = 0.0f;
  for (size_t b = 0; b < batch; ++b) {
    const size_t base = (b * filters + f) * plane;
    for (size_t p = 0; p < plane; ++p) {
      const float dz = dy[dy_off + base + p] * activate_grad_from_output(y[y_off + base + p], act);
      dy[dy_off + base + p] = dz;
      sum += dz;
    }
  }
  dbias[dbias_off + f] = sum;
}
