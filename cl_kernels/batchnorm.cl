// Batch normalisation over (batch, channels, plane) activations: plane = 1 after Dense (per
// feature), H·W after Conv2D (per channel of NCHW). Statistics and gradient sums run one
// work-group per channel, each lane over a fixed stride, then a fixed-order tree: no atomics, so
// every run on a device gives the same bits. Variance is the biased (population) one, as Keras.

#ifndef WG
#define WG 256
#endif

// The tree over `part` (WG floats, a power of two); part[0] holds the sum. Ends with a barrier.
static inline void bn_tree(__local float* part, const uint lane) {
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint span = WG / 2; span > 0; span /= 2) {
    if (lane < span) part[lane] += part[lane + span];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}

static inline size_t bn_index(const uint j, const uint c, const uint channels, const uint plane) {
  const uint n = j / plane;
  return ((size_t)n * channels + c) * plane + (j - n * plane);
}

// Group c: mean and biased variance of channel c over batch·plane values (two passes: the mean,
// then the squared deviations), into stats[c] and stats[channels + c]; with `update`, folded into
// the moving statistics: moving = moving·momentum + batch·(1 − momentum).
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void batchnorm_stats(
    __global const float* x, const uint x_off, const uint batch, const uint channels, const uint plane,
    __global float* stats, __global float* moving, const uint moving_off, const float momentum, const uint update) {
  __local float part[WG];
  const uint c = get_group_id(0), lane = get_local_id(0);
  const uint m = batch * plane;
  x += x_off;
  float sum = 0.0f;
  for (uint j0 = 0; j0 < m; j0 += WG) {
    const uint j = j0 + lane;
    if (j < m) sum += x[bn_index(j, c, channels, plane)];
  }
  part[lane] = sum;
  bn_tree(part, lane);
  const float mean = part[0] / (float)m;
  barrier(CLK_LOCAL_MEM_FENCE);  // every lane has read part[0] before it is reused
  float squares = 0.0f;
  for (uint j0 = 0; j0 < m; j0 += WG) {
    const uint j = j0 + lane;
    if (j < m) {
      const float d = x[bn_index(j, c, channels, plane)] - mean;
      squares += d * d;
    }
  }
  part[lane] = squares;
  bn_tree(part, lane);
  if (lane == 0) {
    const float var = part[0] / (float)m;
    stats[c] = mean;
    stats[channels + c] = var;
    if (update) {
      __global float* mm = moving + moving_off;
      mm[c] = mm[c] * momentum + mean * (1.0f - momentum);
      mm[channels + c] = mm[channels + c] * momentum + var * (1.0f - momentum);
    }
  }
}

// y = (x − mean)·(γ / sqrt(var + ε)) + β, element-wise; mean at stats[s_off + c], var at
// stats[s_off + channels + c] (the batch's in training, the moving ones at inference); γ, β at
// params[p_off + c], params[p_off + channels + c].
__kernel void batchnorm_forward(__global const float* x, const uint x_off, __global float* y, const uint y_off,
                                const uint n, const uint channels, const uint plane, __global const float* stats,
                                const uint s_off, __global const float* params, const uint p_off,
                                const float epsilon) {
  const uint i = get_global_id(0);
  if (i >= n) return;
  const uint c = (i / plane) % channels;
  const float scale = params[p_off + c] / sqrt(stats[s_off + channels + c] + epsilon);
  y[y_off + i] = (x[x_off + i] - stats[s_off + c]) * scale + params[p_off + channels + c];
}

// Group c: dβ = Σ dy and dγ = Σ dy·x̂ (x̂ = (x − mean)/sqrt(var + ε)) over the channel, into
// grads[g_off + channels + c] and grads[g_off + c].
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void batchnorm_backward_sums(
    __global const float* x, const uint x_off, __global const float* dy, const uint dy_off, const uint batch,
    const uint channels, const uint plane, __global const float* stats, const float epsilon,
    __global float* grads, const uint g_off) {
  __local float part_dy[WG];
  __local float part_dyx[WG];
  const uint c = get_group_id(0), lane = get_local_id(0);
  const uint m = batch * plane;
  const float mean = stats[c], inv = 1.0f / sqrt(stats[channels + c] + epsilon);
  float s_dy = 0.0f, s_dyx = 0.0f;
  for (uint j0 = 0; j0 < m; j0 += WG) {
    const uint j = j0 + lane;
    if (j < m) {
      const size_t k = bn_index(j, c, channels, plane);
      const float g = dy[dy_off + k];
      s_dy += g;
      s_dyx += g * ((x[x_off + k] - mean) * inv);
    }
  }
  part_dy[lane] = s_dy;
  part_dyx[lane] = s_dyx;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint span = WG / 2; span > 0; span /= 2) {
    if (lane < span) {
      part_dy[lane] += part_dy[lane + span];
      part_dyx[lane] += part_dyx[lane + span];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lane == 0) {
    grads[g_off + c] = part_dyx[0];
    grads[g_off + channels + c] = part_dy[0];
  }
}

// dx = γ·inv/m · (m·dy − dβ − x̂·dγ), element-wise, m = batch·plane; dx may be dy itself.
__kernel void batchnorm_backward_dx(__global const float* x, const uint x_off, __global const float* dy,
                                    const uint dy_off, __global float* dx, const uint dx_off, const uint n,
                                    const uint channels, const uint plane, const uint m,
                                    __global const float* stats, const float epsilon,
                                    __global const float* params, const uint p_off, __global const float* grads,
                                    const uint g_off) {
  const uint i = get_global_id(0);
  if (i >= n) return;
  const uint c = (i / plane) % channels;
  const float inv = 1.0f / sqrt(stats[channels + c] + epsilon);
  const float xhat = (x[x_off + i] - stats[c]) * inv;
  const float fm = (float)m;
  dx[dx_off + i] = params[p_off + c] * inv / fm *
                   (fm * dy[dy_off + i] - grads[g_off + channels + c] - xhat * grads[g_off + c]);
}
