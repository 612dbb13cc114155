// Softmax + cross-entropy + its gradient in one kernel, with the loss sum and count of correct
// predictions reduced in the same launch. Work-group g takes rows [g·rows_per_group, …) and its
// WG work-items stride over them; its sums (a fixed tree over the lanes) go to metrics[2·(slot+g)],
// metrics[2·(slot+g)+1]. One group (a training batch) writes the caller's slot directly; several
// write partials that softmax_xent_sum adds in group order. Every order is fixed, so the result
// is deterministic. logits:(rows,classes); labels:(rows) ints; dlogits may be null (with_grad = 0)
// for evaluation.
#ifndef WG
#define WG 256
#endif
#if WG < 1 || (WG & (WG - 1)) != 0
#error "softmax_xent: WG must be a power of two (the tree reduction halves it)"
#endif

__kernel __attribute__((reqd_work_group_size(WG, 1, 1)))
void softmax_xent(__global const float* logits, const uint logits_off, __global const int* labels,
                  const uint labels_off, __global float* dlogits, const uint dlogits_off, const uint rows,
                  const uint rows_per_group, const uint classes, const float grad_scale, const int with_grad,
                  __global float* metrics, const uint slot) {
  __local float loss_part[WG];
  __local float correct_part[WG];
  const uint lid = get_local_id(0), group = get_group_id(0);
  const uint first = group * rows_per_group, end = first + min(rows_per_group, rows - first);
  float loss = 0.0f, correct = 0.0f;
  for (uint r = first + lid; r < end; r += WG) {
    __global const float* z = logits + logits_off + (size_t)r * classes;
    const int label = labels[labels_off + r];
    float max_z = z[0];
    uint argmax = 0;
    for (uint c = 1; c < classes; ++c)
      if (z[c] > max_z) max_z = z[c], argmax = c;
    float sum = 0.0f;
    for (uint c = 0; c < classes; ++c) sum += exp(z[c] - max_z);
    loss += log(sum) - (z[label] - max_z);
    correct += argmax == (uint)label ? 1.0f : 0.0f;
    if (with_grad) {
      const float inv_sum = 1.0f / sum;
      __global float* dz = dlogits + dlogits_off + (size_t)r * classes;
      for (uint c = 0; c < classes; ++c)
        dz[c] = (exp(z[c] - max_z) * inv_sum - (c == (uint)label ? 1.0f : 0.0f)) * grad_scale;
    }
  }
  loss_part[lid] = loss;
  correct_part[lid] = correct;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint stride = WG / 2; stride > 0; stride /= 2) {
    if (lid < stride) {
      loss_part[lid] += loss_part[lid + stride];
      correct_part[lid] += correct_part[lid + stride];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0) {
    metrics[2 * (slot + group)] = loss_part[0];
    metrics[2 * (slot + group) + 1] = correct_part[0];
  }
}

// metrics[2·slot], metrics[2·slot+1] = the groups' partial sums added in group order (one work-item).
__kernel void softmax_xent_sum(__global const float* partials, const uint groups, __global float* metrics,
                               const uint slot) {
  if (get_global_id(0) != 0) return;
  float loss = 0.0f, correct = 0.0f;
  for (uint g = 0; g < groups; ++g) {
    loss += partials[2 * g];
    correct += partials[2 * g + 1];
  }
  metrics[2 * slot] = loss;
  metrics[2 * slot + 1] = correct;
}

// Row-wise softmax probabilities (prediction): one work-item per row.  logits,probs:(rows,classes)
__kernel void softmax_forward(__global const float* logits, const uint logits_off, __global float* probs,
                              const uint probs_off, const uint rows, const uint classes) {
  const uint r = get_global_id(0);
  if (r >= rows) return;
  __global const float* z = logits + logits_off + (size_t)r * classes;
  __global float* p = probs + probs_off + (size_t)r * classes;
  float max_z = z[0];
  for (uint c = 1; c < classes; ++c) max_z = fmax(max_z, z[c]);
  float sum = 0.0f;
  for (uint c = 0; c < classes; ++c) sum += exp(z[c] - max_z);
  const float inv_sum = 1.0f / sum;
  for (uint c = 0; c < classes; ++c) p[c] = exp(z[c] - max_z) * inv_sum;
}
