// Optimizer updates over the flat parameter buffer: one launch updates every layer.
// Formulas follow Keras (tf.keras.optimizers) so hyper-parameters mean the same thing.

// SGD; with momentum m: v = m·v − lr·g, then w += v (or, Nesterov, w += m·v − lr·g).
__kernel void sgd_update(__global float* w, __global const float* g, __global float* v, const uint n,
                         const float lr, const float momentum, const int nesterov) {
  const size_t i = get_global_id(0);
  if (i >= n) return;
  if (momentum == 0.0f) {
    w[i] -= lr * g[i];
    return;
  }
  const float vi = momentum * v[i] - lr * g[i];
  v[i] = vi;
  w[i] += nesterov ? momentum * vi - lr * g[i] : vi;
}

// RMSprop: a = ρ·a + (1−ρ)·g², w −= lr·g / √(a + ε) — ε inside the root, as Keras has it (outside,
// a tiny gradient takes a far larger step: 10× Keras' for |g| = 1e-4 on the first step).
__kernel void rmsprop_update(__global float* w, __global const float* g, __global float* a, const uint n,
                             const float lr, const float rho, const float epsilon) {
  const size_t i = get_global_id(0);
  if (i >= n) return;
  const float gi = g[i];
  const float ai = rho * a[i] + (1.0f - rho) * gi * gi;
  a[i] = ai;
  w[i] -= lr * gi / sqrt(ai + epsilon);
}

// Adam / AdamW: m = β1·m + (1−β1)·g, v = β2·v + (1−β2)·g², w −= lr_t·m / (√v + ε) where the host
// passes lr_t = lr·√(1−β2^t)/(1−β1^t); AdamW first decays w by decay = lr·weight_decay.
__kernel void adam_update(__global float* w, __global const float* g, __global float* m, __global float* v,
                          const uint n, const float lr_t, const float beta1, const float beta2,
                          const float epsilon, const float decay) {
  const size_t i = get_global_id(0);
  if (i >= n) return;
  const float gi = g[i];
  const float mi = beta1 * m[i] + (1.0f - beta1) * gi;
  const float vi = beta2 * v[i] + (1.0f - beta2) * gi * gi;
  m[i] = mi;
  v[i] = vi;
  w[i] = w[i] * (1.0f - decay) - lr_t * mi / (sqrt(vi) + epsilon);
}
