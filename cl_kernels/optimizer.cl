// Optimizer updates over the flat parameter buffer: one launch updates every layer.
// Formulas follow Keras (tf.keras.optimizers) so hyper-parameters mean the same thing.

// Each work-item updates PER_ITEM consecutive parameters by vector loads and stores (the buffer's
// last partial group element by element). 16 on a CPU: RMSprop over 669,706 parameters took 0.23 ms
// on PoCL where one parameter per work-item took 0.78 ms (same run, 2 loaded vCPUs). 4 on a GPU
// (-DPER_ITEM=4, the launcher's choice), so a warp's lanes read consecutive 16 bytes: 16 a lane spread
// one load instruction over 64-byte strides (the H200's RMSprop took 0.019 ms, 5x its bandwidth's time).
// The arithmetic is the same lane by lane, so both give the same bits.
#ifndef PER_ITEM
#define PER_ITEM 16
#endif
#if PER_ITEM == 16
#define floatv float16
#define vloadv vload16
#define vstorev vstore16
#elif PER_ITEM == 4
#define floatv float4
#define vloadv vload4
#define vstorev vstore4
#else
#error "optimizer.cl: PER_ITEM must be 16 or 4"
#endif

// SGD; with momentum m: v = m·v − lr·g, then w += v (or, Nesterov, w += m·v − lr·g).
static inline void sgd_one(__global float* w, __global const float* g, __global float* v, const size_t i,
                           const float lr, const float momentum, const int nesterov) {
  if (momentum == 0.0f) {
    w[i] -= lr * g[i];
    return;
  }
  const float vi = momentum * v[i] - lr * g[i];
  v[i] = vi;
  w[i] += nesterov ? momentum * vi - lr * g[i] : vi;
}

__kernel void sgd_update(__global float* w, __global const float* g, __global float* v, const uint n,
                         const float lr, const float momentum, const int nesterov) {
  const size_t i0 = PER_ITEM * get_global_id(0);
  if (i0 >= n) return;
  if (i0 + PER_ITEM > n) {
    for (size_t i = i0; i < n; ++i) sgd_one(w, g, v, i, lr, momentum, nesterov);
    return;
  }
  const floatv gi = vloadv(0, g + i0);
  if (momentum == 0.0f) {
    vstorev(vloadv(0, w + i0) - lr * gi, 0, w + i0);
    return;
  }
  const floatv vi = momentum * vloadv(0, v + i0) - lr * gi;
  vstorev(vi, 0, v + i0);
  vstorev(vloadv(0, w + i0) + (nesterov ? momentum * vi - lr * gi : vi), 0, w + i0);
}

// RMSprop: a = ρ·a + (1−ρ)·g², w −= lr·g / √(a + ε) — ε inside the root, as Keras has it (outside,
// a tiny gradient takes a far larger step: 10× Keras' for |g| = 1e-4 on the first step).
__kernel void rmsprop_update(__global float* w, __global const float* g, __global float* a, const uint n,
                             const float lr, const float rho, const float epsilon) {
  const size_t i0 = PER_ITEM * get_global_id(0);
  if (i0 >= n) return;
  if (i0 + PER_ITEM > n) {
    for (size_t i = i0; i < n; ++i) {
      const float gi = g[i];
      const float ai = rho * a[i] + (1.0f - rho) * gi * gi;
      a[i] = ai;
      w[i] -= lr * gi / sqrt(ai + epsilon);
    }
    return;
  }
  const floatv gi = vloadv(0, g + i0);
  const floatv ai = rho * vloadv(0, a + i0) + (1.0f - rho) * gi * gi;
  vstorev(ai, 0, a + i0);
  vstorev(vloadv(0, w + i0) - lr * gi / sqrt(ai + epsilon), 0, w + i0);
}

// Adam / AdamW: m = β1·m + (1−β1)·g, v = β2·v + (1−β2)·g², w −= lr_t·m / (√v + ε) where the host
// passes lr_t = lr·√(1−β2^t)/(1−β1^t); AdamW first decays w by decay = lr·weight_decay.
__kernel void adam_update(__global float* w, __global const float* g, __global float* m, __global float* v,
                          const uint n, const float lr_t, const float beta1, const float beta2,
                          const float epsilon, const float decay) {
  const size_t i0 = PER_ITEM * get_global_id(0);
  if (i0 >= n) return;
  if (i0 + PER_ITEM > n) {
    for (size_t i = i0; i < n; ++i) {
      const float gi = g[i];
      const float mi = beta1 * m[i] + (1.0f - beta1) * gi;
      const float vi = beta2 * v[i] + (1.0f - beta2) * gi * gi;
      m[i] = mi;
      v[i] = vi;
      w[i] = w[i] * (1.0f - decay) - lr_t * mi / (sqrt(vi) + epsilon);
    }
    return;
  }
  const floatv gi = vloadv(0, g + i0);
  const floatv mi = beta1 * vloadv(0, m + i0) + (1.0f - beta1) * gi;
  const floatv vi = beta2 * vloadv(0, v + i0) + (1.0f - beta2) * gi * gi;
  vstorev(mi, 0, m + i0);
  vstorev(vi, 0, v + i0);
  vstorev(vloadv(0, w + i0) * (1.0f - decay) - lr_t * mi / (sqrt(vi) + epsilon), 0, w + i0);
}
