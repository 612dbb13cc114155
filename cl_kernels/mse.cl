// Mean squared error + its gradient + the mean absolute error in one kernel (Keras' definition:
// per row the mean over outputs). Sums over rows go to metrics[2·slot] (loss) and
// metrics[2·slot+1] (MAE). One work-group of WG work-items strides over the rows; the fixed
// reduction order makes the result deterministic. outputs,targets,grad:(rows,width); grad may be
// unused (with_grad = 0) for evaluation.
#ifndef WG
#define WG 256
#endif

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void mse(__global const float* outputs, const uint outputs_off, __global const float* targets,
         const uint targets_off, __global float* grad, const uint grad_off, const uint rows, const uint width,
         const float grad_scale, const int with_grad, __global float* metrics, const uint slot) {
  __local float loss_part[WG];
  __local float mae_part[WG];
  const uint lid = get_local_id(0);
  const float inv_width = 1.0f / (float)width;
  const float grad_factor = 2.0f * inv_width * grad_scale;
  float loss = 0.0f, mae = 0.0f;
  for (ulong r = lid; r < rows; r += WG) {
    const ulong base = r * width;  // 64-bit: rows·width may pass 2^32
    __global const float* y = outputs + outputs_off + base;
    __global const float* t = targets + targets_off + base;
    float squares = 0.0f, absolutes = 0.0f;
    for (uint c = 0; c < width; ++c) {
      const float d = y[c] - t[c];
      squares += d * d;
      absolutes += fabs(d);
    }
    loss += squares * inv_width;
    mae += absolutes * inv_width;
    if (with_grad) {
      __global float* g = grad + grad_off + base;
      for (uint c = 0; c < width; ++c) g[c] = (y[c] - t[c]) * grad_factor;
    }
  }
  loss_part[lid] = loss;
  mae_part[lid] = mae;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint stride = WG / 2; stride > 0; stride /= 2) {
    if (lid < stride) {
      loss_part[lid] += loss_part[lid + stride];
      mae_part[lid] += mae_part[lid + stride];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) {
    metrics[2 * slot] = loss_part[0];
    metrics[2 * slot + 1] = mae_part[0];
  }
}
