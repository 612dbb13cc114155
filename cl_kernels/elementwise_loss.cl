// Losses whose value and gradient are a function of one output and its target, as Keras defines
// them (per row the mean over outputs): mean absolute error, Huber (delta 1) and binary cross-entropy
// from logits; each with its metric, in one kernel (the pattern of mse.cl). Sums over rows go to
// metrics[2·slot] (loss) and metrics[2·slot+1] (metric: the MAE, or binary accuracy at p > 0.5, i.e.
// z > 0). One work-group of WG work-items strides over the rows; the fixed reduction order makes the
// result deterministic. outputs,targets,grad:(rows,width); grad unused when with_grad = 0.
#ifndef WG
#define WG 256
#endif
#if WG < 1 || (WG & (WG - 1)) != 0
#error "elementwise_loss: WG must be a power of two (the tree reduction halves it)"
#endif

#define LOSS_MAE 0
#define LOSS_HUBER 1
#define LOSS_BCE 2

// The loss of output y against target t, its derivative in y (*grad) and the metric (*metric).
static inline float element_loss(const int kind, const float y, const float t, float* grad, float* metric) {
  if (kind == LOSS_BCE) {  // y is the logit z: max(z,0) − z·t + log1p(exp(−|z|)), stable for any z
    const float e = exp(-fabs(y));
    const float p = y >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);  // sigmoid(z) without overflow
    *grad = p - t;
    *metric = (y > 0.0f ? 1.0f : 0.0f) == t ? 1.0f : 0.0f;  // Keras' binary_accuracy (threshold 0.5)
    return fmax(y, 0.0f) - y * t + log1p(e);
  }
  const float d = y - t, a = fabs(d);
  *metric = a;  // the mean absolute error beside either regression loss
  if (kind == LOSS_HUBER) {
    *grad = a <= 1.0f ? d : (d > 0.0f ? 1.0f : -1.0f);
    return a <= 1.0f ? 0.5f * d * d : a - 0.5f;
  }
  *grad = d > 0.0f ? 1.0f : (d < 0.0f ? -1.0f : 0.0f);
  return a;
}

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void elementwise_loss(__global const float* outputs, const uint outputs_off, __global const float* targets,
                      const uint targets_off, __global float* grad, const uint grad_off, const uint rows,
                      const uint width, const int kind, const float grad_scale, const int with_grad,
                      __global float* metrics, const uint slot) {
  __local float loss_part[WG];
  __local float metric_part[WG];
  const uint lid = get_local_id(0);
  const float inv_width = 1.0f / (float)width;
  const float grad_factor = inv_width * grad_scale;
  float loss = 0.0f, metric = 0.0f;
  for (ulong r = lid; r < rows; r += WG) {
    const ulong base = r * width;  // 64-bit: rows·width may pass 2^32
    __global const float* y = outputs + outputs_off + base;
    __global const float* t = targets + targets_off + base;
    __global float* g = grad + grad_off + base;
    float row_loss = 0.0f, row_metric = 0.0f;
    for (uint c = 0; c < width; ++c) {
      float dy, m;
      row_loss += element_loss(kind, y[c], t[c], &dy, &m);
      row_metric += m;
      if (with_grad) g[c] = dy * grad_factor;
    }
    loss += row_loss * inv_width;
    metric += row_metric * inv_width;
  }
  loss_part[lid] = loss;
  metric_part[lid] = metric;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint stride = WG / 2; stride > 0; stride /= 2) {
    if (lid < stride) {
      loss_part[lid] += loss_part[lid + stride];
      metric_part[lid] += metric_part[lid + stride];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) {
    metrics[2 * slot] = loss_part[0];
    metrics[2 * slot + 1] = metric_part[0];
  }
}

// probs = sigmoid(logits) element-wise (a binary cross-entropy model's predictions), in the form
// that never overflows: one work-item per element.  logits,probs:(count)
__kernel void sigmoid_forward(__global const float* logits, const uint logits_off, __global float* probs,
                              const uint probs_off, const ulong count) {
  const size_t i = get_global_id(0);
  if (i >= count) return;
  const float z = logits[logits_off + i];
  const float e = exp(-fabs(z));
  probs[probs_off + i] = z >= 0.0f ? 1.0f / (1.0f + e) : e / (1.0f + e);
}
