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
