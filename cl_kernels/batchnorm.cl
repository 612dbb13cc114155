// Batch normalisation over (batch, channels, plane) activations: plane = 1 after Dense (per
// feature), H·W after Conv2D (per channel of NCHW), with the layer's activation fused:
// y = act(γ·x̂ + β). Statistics and gradient sums run one work-group per channel, each lane over a
// fixed share, then a fixed-order tree: no atomics, so every run on a device gives the same bits.
// Variance is the biased (population) one, as Keras'. BN_ACT (-D, default 0: linear) is the
// activation's code (common.cl's activate()), a constant per program so a CPU compiler vectorises
// the element loops; the layer's op compiles its own variant.

#ifndef WG
#define WG 256
#endif
#ifndef BN_ACT
#define BN_ACT 0
#endif

// Each lane's share of channel c, always in the same order, as K (the element's index), in ONE
// loop whose trip count is the same for every lane (PoCL then runs the lanes as the inner, vector
// loop; nested loops or per-lane division kept it scalar): a plane at least WG wide in chunks of
// WG along each sample's row; a narrower one (after Dense, or a small image) as WG / plane whole
// samples an iteration, each lane at a fixed (sample, position) of the chunk. The body goes between
// BN_EACH_BEGIN(K) and BN_EACH_END: OpenCL C 1.2 has no variadic macros (NVIDIA's compiler refuses
// them; PoCL's and Intel's accept them), so the body cannot be a macro argument.
#define BN_EACH_BEGIN(K)                                                                          \
  {                                                                                               \
    const uint wide_ = plane >= WG, per_ = wide_ ? 1 : WG / plane;                                \
    const uint lane_n_ = wide_ ? 0 : lane / plane, lane_p_ = wide_ ? lane : lane - lane_n_ * plane; \
    const uint step_ = wide_ ? WG : plane;                                                        \
    const uint steps_ = wide_ ? batch * ((plane + WG - 1) / WG) : (batch + per_ - 1) / per_;      \
    uint n0_ = 0, p0_ = 0;                                                                        \
    for (uint t_ = 0; t_ < steps_; ++t_) {                                                        \
      const uint n_ = n0_ + lane_n_, p_ = p0_ + lane_p_;                                          \
      if (p_ < plane && lane_n_ < per_ && n_ < batch) {                                           \
        const size_t K = ((size_t)n_ * channels + c) * plane + p_;
#define BN_EACH_END                                                                               \
      }                                                                                           \
      p0_ += step_;                                                                               \
      if (p0_ >= plane) {                                                                         \
        p0_ = 0;                                                                                  \
        n0_ += per_;                                                                              \
      }                                                                                           \
    }                                                                                             \
  }

// act(z), and dy·act'(z) from z = (x − mean)·scale + β recomputed (every activation's derivative
// from its output, gelu's from z: common.cl's activate_grad), so the layer keeps no output.
static inline float bn_act(const float z) {
#if BN_ACT == 0
  return z;
#else
  return activate(z, BN_ACT);
#endif
}
static inline float bn_act_grad(const float dy, const float z) {
#if BN_ACT == 0
  return dy;
#elif BN_ACT == ACT_GELU
  return dy * activate_grad(z, BN_ACT);
#else
  return dy * activate_grad(activate(z, BN_ACT), BN_ACT);
#endif
}

// BN_ROWS (-D, Runtime::row_kernels: PoCL's CPU driver): the reductions give each lane whole rows
// (a sample's plane of the channel) and walk them eight values at a time, so the work-item's own
// loop is vector code. PoCL ran the lane-strided form below scalar: on the reference CNN's second
// BatchNormalization (128 × 64 × 576) `batchnorm_stats` took 3.8× and `batchnorm_backward_sums` 6.3×
// a `conv_output_forward` pass over the same values; in rows 0.6× and 0.8× (load 8–9, 2 vCPUs).
#ifndef BN_ROWS
#define BN_ROWS 0
#endif
// The eight lanes of a float8 added in a fixed order.
static inline float bn_sum8(const float8 v) {
  return ((v.s0 + v.s1) + (v.s2 + v.s3)) + ((v.s4 + v.s5) + (v.s6 + v.s7));
}
// bn_act_grad over eight values: relu and linear as vector selects, the others value by value.
static inline float8 bn_act_grad8(const float8 dy, const float8 z) {
#if BN_ACT == 0
  return dy;
#elif BN_ACT == 1
  return select((float8)(0.0f), dy, z > (float8)(0.0f));
#else
  return (float8)(bn_act_grad(dy.s0, z.s0), bn_act_grad(dy.s1, z.s1), bn_act_grad(dy.s2, z.s2),
                  bn_act_grad(dy.s3, z.s3), bn_act_grad(dy.s4, z.s4), bn_act_grad(dy.s5, z.s5),
                  bn_act_grad(dy.s6, z.s6), bn_act_grad(dy.s7, z.s7));
#endif
}

// a[0] ← Σ va, b[0] ← Σ vb over the WG lanes' values, in a fixed tree (every lane calls it).
static inline void bn_tree_sum2(__local float* a, __local float* b, const float va, const float vb,
                                const uint lane) {
  a[lane] = va;
  b[lane] = vb;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint span = WG / 2; span > 0; span /= 2) {
    if (lane < span) {
      a[lane] += a[lane + span];
      b[lane] += b[lane + span];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
}

// The terms one value x adds to the statistics' sums: d = x − shift and d².
static inline void bn_stats_terms(const float xk, const float shift, float* sum, float* squares) {
  const float d = xk - shift;
  *sum += d;
  *squares += d * d;
}

// Group c's finish of the statistics (both forms), from the sums of d and d² over its channel's fm
// values (every lane calls it): mean and biased variance into stats[c] and stats[channels + c] and,
// with `update`, folded into the moving statistics.
static inline void bn_stats_store(const float sum, const float squares, const float shift, const float fm,
                                  const uint c, const uint channels, const uint lane, __global float* stats,
                                  __global float* moving, const uint moving_off, const float momentum,
                                  const uint update) {
  const float mean_d = sum / fm;
  const float mean = shift + mean_d, var = fmax(squares / fm - mean_d * mean_d, 0.0f);
  if (lane == 0) {
    stats[c] = mean;
    stats[channels + c] = var;
    if (update) {
      __global float* mm = moving + moving_off;
      mm[c] = mm[c] * momentum + mean * (1.0f - momentum);
      mm[channels + c] = mm[channels + c] * momentum + var * (1.0f - momentum);
    }
  }
}

// Channel c's constants for the gradient sums: x̂ = (x − mean)·inv, z = (x − mean)·scale + β.
typedef struct {
  float mean, inv, scale, beta;
} BnGradConst;
static inline BnGradConst bn_grad_const(__global const float* stats, const float epsilon,
                                        __global const float* params, const uint p_off, const uint channels,
                                        const uint c) {
  BnGradConst k;
  const float var = stats[channels + c];
  k.mean = stats[c];
  k.inv = 1.0f / sqrt(var + epsilon);
  k.scale = params[p_off + c] / sqrt(var + epsilon);
  k.beta = params[p_off + channels + c];
  return k;
}

// The terms one value x with gradient dy adds to the gradient sums: g = dy·act'(z) and g·x̂.
static inline void bn_grad_terms(const float xk, const float dyk, const BnGradConst k, float* s_dy,
                                 float* s_dyx) {
  const float g = bn_act_grad(dyk, (xk - k.mean) * k.scale + k.beta);
  *s_dy += g;
  *s_dyx += g * ((xk - k.mean) * k.inv);
}

// Group c's finish of the gradient sums (both forms; every lane calls it): dγ = Σ g·x̂ and dβ = Σ g
// into grads[g_off + c] and grads[g_off + channels + c].
static inline void bn_grads_store(const float s_dy, const float s_dyx, const uint c, const uint channels,
                                  const uint lane, __global float* grads, const uint g_off) {
  if (lane == 0) {
    grads[g_off + c] = s_dyx;
    grads[g_off + channels + c] = s_dy;
  }
}

// Group c: mean and biased variance of channel c over batch·plane values into stats[c] and
// stats[channels + c]: one pass of the sums of d = x − x₀ and d² (x₀ the channel's first value,
// which keeps E[d²] − E[d]² from cancelling), var = E[d²] − E[d]². With `update`, folded into the
// moving statistics: moving = moving·momentum + batch·(1 − momentum). (The group also normalising
// its channel from cache, one launch a direction, was slower on PoCL: its element loops ran
// scalar, 50 ms against 26 for both launches on the reference shapes.)
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void batchnorm_stats(
    __global const float* x, const uint x_off, const uint batch, const uint channels, const uint plane,
    __global float* stats, __global float* moving, const uint moving_off, const float momentum,
    const uint update) {
  __local float part[WG];
  __local float part_sq[WG];
  const uint c = get_group_id(0), lane = get_local_id(0);
  const float fm = (float)(batch * plane);
  x += x_off;
  const float shift = x[(size_t)c * plane];
  float sum = 0.0f, squares = 0.0f;
  if (BN_ROWS && plane >= 8) {
    float8 s8 = (float8)(0.0f), q8 = (float8)(0.0f);
    for (uint n = lane; n < batch; n += WG) {
      __global const float* row = x + ((size_t)n * channels + c) * plane;
      uint p = 0;
      for (; p + 8 <= plane; p += 8) {
        const float8 d = vload8(0, row + p) - shift;
        s8 += d;
        q8 += d * d;
      }
      for (; p < plane; ++p) bn_stats_terms(row[p], shift, &sum, &squares);
    }
    sum += bn_sum8(s8);
    squares += bn_sum8(q8);
  } else {
    BN_EACH_BEGIN(k)
    bn_stats_terms(x[k], shift, &sum, &squares);
    BN_EACH_END
  }
  bn_tree_sum2(part, part_sq, sum, squares, lane);
  bn_stats_store(part[0], part_sq[0], shift, fm, c, channels, lane, stats, moving, moving_off, momentum,
                 update);
}

// y = act((x − mean)·(γ / sqrt(var + ε)) + β), element-wise; mean at stats[s_off + c], var at
// stats[s_off + channels + c] (the batch's in training, the moving ones at inference); γ, β at
// params[p_off + c], params[p_off + channels + c]. A 3-D range over (plane, channels, batch), or
// (channels, 1, batch) when plane is 1 (`flat`), so no lane divides an index (a lane's `r % channels`
// made PoCL's vectoriser divide in every lane).
__kernel void batchnorm_forward(__global const float* x, const uint x_off, __global float* y, const uint y_off,
                                const uint cols, const uint channels, const uint batch, const uint flat,
                                __global const float* stats, const uint s_off, __global const float* params,
                                const uint p_off, const float epsilon) {
  const size_t q = get_global_id(0);
  const uint g1 = get_global_id(1), n = get_global_id(2);
  if (q >= cols || g1 >= (flat ? 1 : channels) || n >= batch) return;
  const uint c = flat ? (uint)q : g1;
  const size_t i = ((size_t)n * (flat ? 1 : channels) + g1) * cols + q;
  const float scale = params[p_off + c] / sqrt(stats[s_off + channels + c] + epsilon);
  y[y_off + i] = bn_act((x[x_off + i] - stats[s_off + c]) * scale + params[p_off + channels + c]);
}

// Group c: with g = dy·act'(z), dβ = Σ g and dγ = Σ g·x̂ (x̂ = (x − mean)/sqrt(var + ε)) over the
// channel, into grads[g_off + channels + c] and grads[g_off + c].
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void batchnorm_backward_sums(
    __global const float* x, const uint x_off, __global const float* dy, const uint dy_off, const uint batch,
    const uint channels, const uint plane, __global const float* stats, const float epsilon,
    __global const float* params, const uint p_off, __global float* grads, const uint g_off) {
  __local float part_dy[WG];
  __local float part_dyx[WG];
  const uint c = get_group_id(0), lane = get_local_id(0);
  const BnGradConst k = bn_grad_const(stats, epsilon, params, p_off, channels, c);
  x += x_off;
  dy += dy_off;
  float s_dy = 0.0f, s_dyx = 0.0f;
  if (BN_ROWS && plane >= 8) {
    float8 a8 = (float8)(0.0f), b8 = (float8)(0.0f);
    for (uint n = lane; n < batch; n += WG) {
      const size_t base = ((size_t)n * channels + c) * plane;
      uint p = 0;
      for (; p + 8 <= plane; p += 8) {
        const float8 xh = (vload8(0, x + base + p) - k.mean);
        const float8 g = bn_act_grad8(vload8(0, dy + base + p), xh * k.scale + k.beta);
        a8 += g;
        b8 += g * (xh * k.inv);
      }
      for (; p < plane; ++p) bn_grad_terms(x[base + p], dy[base + p], k, &s_dy, &s_dyx);
    }
    s_dy += bn_sum8(a8);
    s_dyx += bn_sum8(b8);
  } else {
    BN_EACH_BEGIN(i)
    bn_grad_terms(x[i], dy[i], k, &s_dy, &s_dyx);
    BN_EACH_END
  }
  bn_tree_sum2(part_dy, part_dyx, s_dy, s_dyx, lane);
  bn_grads_store(part_dy[0], part_dyx[0], c, channels, lane, grads, g_off);
}

// dx = γ·inv/m · (m·g − dβ − x̂·dγ), element-wise over the range of batchnorm_forward, m =
// batch·plane, g = dy·act'(z); dx may be dy.
__kernel void batchnorm_backward_dx(__global const float* x, const uint x_off, __global const float* dy,
                                    const uint dy_off, __global float* dx, const uint dx_off, const uint cols,
                                    const uint channels, const uint batch, const uint flat, const uint m,
                                    __global const float* stats, const float epsilon,
                                    __global const float* params, const uint p_off, __global const float* grads,
                                    const uint g_off) {
  const size_t q = get_global_id(0);
  const uint g1 = get_global_id(1), n = get_global_id(2);
  if (q >= cols || g1 >= (flat ? 1 : channels) || n >= batch) return;
  const uint c = flat ? (uint)q : g1;
  const size_t i = ((size_t)n * (flat ? 1 : channels) + g1) * cols + q;
  const float mean = stats[c], var = stats[channels + c];
  const float inv = 1.0f / sqrt(var + epsilon);
  const float gamma = params[p_off + c], scale = gamma / sqrt(var + epsilon);
  const float xk = x[x_off + i];
  const float g = bn_act_grad(dy[dy_off + i], (xk - mean) * scale + params[p_off + channels + c]);
  const float fm = (float)m;
  dx[dx_off + i] = gamma * inv / fm * (fm * g - grads[g_off + channels + c] - ((xk - mean) * inv) * grads[g_off + c]);
}

// The element passes in rows (BN_ROWS drivers, a plane of at least 8 after Conv2D; the launcher picks
// them): one work-item a row (n, c) of a plane over a 1-D range of batch·channels, the channel's
// constants once and eight values at a time. The element forms above recompute the channel's scale,
// a square root and a division, for every value: the BatchNorm CNN's second layer (128 × 64 × 576)
// took 5.6 ms forward and 7.8 backward on PoCL (Zen 5), 7 GB/s. The same arguments and arithmetic.
static inline float8 bn_act8(const float8 z) {
#if BN_ACT == 0
  return z;
#elif BN_ACT == 1
  return select((float8)(0.0f), z, z > (float8)(0.0f));  // as activate()
#else
  return (float8)(bn_act(z.s0), bn_act(z.s1), bn_act(z.s2), bn_act(z.s3), bn_act(z.s4), bn_act(z.s5),
                  bn_act(z.s6), bn_act(z.s7));
#endif
}

__kernel __attribute__((vec_type_hint(float8))) void batchnorm_forward_rows(
    __global const float* x, const uint x_off, __global float* y, const uint y_off, const uint cols,
    const uint channels, const uint batch, const uint flat, __global const float* stats, const uint s_off,
    __global const float* params, const uint p_off, const float epsilon) {
  const size_t row = get_global_id(0);
  if (row >= (size_t)batch * channels || flat) return;
  const uint c = (uint)(row % channels);
  const float mean = stats[s_off + c], beta = params[p_off + channels + c];
  const float scale = params[p_off + c] / sqrt(stats[s_off + channels + c] + epsilon);
  __global const float* in = x + x_off + row * cols;
  __global float* out = y + y_off + row * cols;
  uint p = 0;
  for (; p + 8 <= cols; p += 8) vstore8(bn_act8((vload8(0, in + p) - mean) * scale + beta), 0, out + p);
  for (; p < cols; ++p) out[p] = bn_act((in[p] - mean) * scale + beta);
}

// dx may be dy: each value is read before it is written, by the same work-item.
__kernel __attribute__((vec_type_hint(float8))) void batchnorm_backward_dx_rows(
    __global const float* x, const uint x_off, __global const float* dy, const uint dy_off,
    __global float* dx, const uint dx_off, const uint cols, const uint channels, const uint batch,
    const uint flat, const uint m, __global const float* stats, const float epsilon,
    __global const float* params, const uint p_off, __global const float* grads, const uint g_off) {
  const size_t row = get_global_id(0);
  if (row >= (size_t)batch * channels || flat) return;
  const uint c = (uint)(row % channels);
  const float mean = stats[c], var = stats[channels + c];
  const float inv = 1.0f / sqrt(var + epsilon);
  const float gamma = params[p_off + c], scale = gamma / sqrt(var + epsilon);
  const float beta = params[p_off + channels + c];
  const float fm = (float)m, factor = gamma * inv / fm;
  const float d_beta = grads[g_off + channels + c], d_gamma = grads[g_off + c];
  __global const float* xr = x + x_off + row * cols;
  __global const float* dyr = dy + dy_off + row * cols;
  __global float* out = dx + dx_off + row * cols;
  uint p = 0;
  for (; p + 8 <= cols; p += 8) {
    const float8 xk = vload8(0, xr + p);
    const float8 g = bn_act_grad8(vload8(0, dyr + p), (xk - mean) * scale + beta);
    vstore8(factor * (fm * g - d_beta - ((xk - mean) * inv) * d_gamma), 0, out + p);
  }
  for (; p < cols; ++p) {
    const float xk = xr[p];
    const float g = bn_act_grad(dyr[p], (xk - mean) * scale + beta);
    out[p] = factor * (fm * g - d_beta - ((xk - mean) * inv) * d_gamma);
  }
}

// The forward pass under a linked MaxPool2D (windows of `size` moved by `size`; see below): one work-item a
// row (n, c), each window's values act((x − mean)·scale + β) as batchnorm_forward_rows computes them, pooled
// in registers with maxpool_forward's comparisons in its order; only the pool's output and argmax (the index
// in the plane) are written, not y.
__kernel void batchnorm_forward_rows_pooled(__global const float* x, const uint x_off, __global float* pooled,
                                            __global int* arg, const uint height, const uint width,
                                            const uint size, const uint out_h, const uint out_w,
                                            const uint channels, const uint batch, __global const float* stats,
                                            const uint s_off, __global const float* params, const uint p_off,
                                            const float epsilon) {
  const size_t row = get_global_id(0);
  if (row >= (size_t)batch * channels) return;
  const uint c = (uint)(row % channels);
  const float mean = stats[s_off + c], beta = params[p_off + channels + c];
  const float scale = params[p_off + c] / sqrt(stats[s_off + channels + c] + epsilon);
  __global const float* in = x + x_off + row * height * width;
  __global float* out = pooled + row * out_h * out_w;
  __global int* at_out = arg + row * out_h * out_w;
  for (uint oy = 0; oy < out_h; ++oy)
    for (uint ox = 0; ox < out_w; ++ox) {
      int best_at = (int)(oy * size * width + ox * size);
      float best = bn_act((in[best_at] - mean) * scale + beta);
      if (size == 2) {
        const int at = best_at;
        const float right = bn_act((in[at + 1] - mean) * scale + beta);
        const float below = bn_act((in[at + (int)width] - mean) * scale + beta);
        const float diagonal = bn_act((in[at + (int)width + 1] - mean) * scale + beta);
        best_at = right > best ? at + 1 : best_at;
        best = right > best ? right : best;
        best_at = below > best ? at + (int)width : best_at;
        best = below > best ? below : best;
        best_at = diagonal > best ? at + (int)width + 1 : best_at;
        best = diagonal > best ? diagonal : best;
      } else {
        for (uint a = 0; a < size; ++a)
          for (uint b = 0; b < size; ++b) {
            const int at = (int)((oy * size + a) * width + ox * size + b);
            const float v = bn_act((in[at] - mean) * scale + beta);
            if (v > best) best = v, best_at = at;
          }
      }
      out[oy * out_w + ox] = best;
      at_out[oy * out_w + ox] = best_at;
    }
}

// The backward under a MaxPool2D of non-overlapping windows (BN_ROWS drivers; Sequential links the two:
// BatchNormalization::takes_pool_gradient). The pool's gradient dyp (batch, channels, pooled) and its
// argmax arg (each window's maximum as an index into the layer's plane) stand in for the full-size
// gradient maxpool_backward would write: (0 + dyp) at each window's argmax, zero everywhere else, so
// neither that gradient nor its pass exists. An index outside the plane adds nothing.

// Group c: dγ and dβ from the windows' maxima only (every other value's g is zero): the same terms as
// batchnorm_backward_sums, summed in another order.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void batchnorm_backward_sums_pooled(
    __global const float* x, const uint x_off, __global const float* dyp, const uint dyp_off,
    __global const int* arg, const uint arg_off, const uint batch, const uint channels, const uint plane,
    const uint pooled, __global const float* stats, const float epsilon, __global const float* params,
    const uint p_off, __global float* grads, const uint g_off) {
  __local float part_dy[WG];
  __local float part_dyx[WG];
  const uint c = get_group_id(0), lane = get_local_id(0);
  const BnGradConst k = bn_grad_const(stats, epsilon, params, p_off, channels, c);
  x += x_off;
  dyp += dyp_off;
  arg += arg_off;
  float s_dy = 0.0f, s_dyx = 0.0f;
  for (uint n = lane; n < batch; n += WG) {
    const size_t base = ((size_t)n * channels + c) * plane, window = ((size_t)n * channels + c) * pooled;
    for (uint j = 0; j < pooled; ++j) {
      const uint p = (uint)arg[window + j];
      if (p < plane) bn_grad_terms(x[base + p], 0.0f + dyp[window + j], k, &s_dy, &s_dyx);
    }
  }
  bn_tree_sum2(part_dy, part_dyx, s_dy, s_dyx, lane);
  bn_grads_store(part_dy[0], part_dyx[0], c, channels, lane, grads, g_off);
}

// One work-item a row (n, c), as batchnorm_backward_dx_rows: every value with g = 0 first, eight at a time,
// then each window's maximum again with its g. Written by one work-item in that order.
__kernel __attribute__((vec_type_hint(float8))) void batchnorm_backward_dx_rows_pooled(
    __global const float* x, const uint x_off, __global const float* dyp, const uint dyp_off,
    __global const int* arg, const uint arg_off, __global float* dx, const uint dx_off, const uint cols,
    const uint pooled, const uint channels, const uint batch, const uint m, __global const float* stats,
    const float epsilon, __global const float* params, const uint p_off, __global const float* grads,
    const uint g_off) {
  const size_t row = get_global_id(0);
  if (row >= (size_t)batch * channels) return;
  const uint c = (uint)(row % channels);
  const float mean = stats[c], var = stats[channels + c];
  const float inv = 1.0f / sqrt(var + epsilon);
  const float gamma = params[p_off + c], scale = gamma / sqrt(var + epsilon);
  const float beta = params[p_off + channels + c];
  const float fm = (float)m, factor = gamma * inv / fm;
  const float d_beta = grads[g_off + channels + c], d_gamma = grads[g_off + c];
  __global const float* xr = x + x_off + row * cols;
  __global const float* dyr = dyp + dyp_off + row * pooled;
  __global const int* ar = arg + arg_off + row * pooled;
  __global float* out = dx + dx_off + row * cols;
  uint p = 0;
  for (; p + 8 <= cols; p += 8)
    vstore8(factor * (fm * (float8)(0.0f) - d_beta - ((vload8(0, xr + p) - mean) * inv) * d_gamma), 0, out + p);
  for (; p < cols; ++p) out[p] = factor * (fm * 0.0f - d_beta - ((xr[p] - mean) * inv) * d_gamma);
  for (uint j = 0; j < pooled; ++j) {
    const uint q = (uint)ar[j];
    if (q >= cols) continue;
    const float xk = xr[q];
    const float g = bn_act_grad(0.0f + dyr[j], (xk - mean) * scale + beta);
    out[q] = factor * (fm * g - d_beta - ((xk - mean) * inv) * d_gamma);
  }
}

// ---- The split form (GPUs: BatchNormOp, RuntimeImpl::split_reductions) ----
// The one-group reductions above keep 32 or 64 work-groups busy (one a channel) on a GPU of 132
// compute units. Here each channel's batch·plane values, in (sample, position) order, are cut into
// `splits` contiguous shares of `share` values; group (s, c) sums share s of channel c into
// partial[c·splits + s] (and partial[channels·splits + c·splits + s]), its lanes reading consecutive
// values along the plane; then one group a channel adds its channel's partials in a fixed order and
// finishes as the one-group kernel does. No atomics: every run on a device gives the same bits. The
// sums' order differs from the one-group form's, so the results may differ from a CPU's in the last
// bits. The shift (x₀, the channel's first value) is the one-group form's.

// Lane `lane`'s values of share s of channel c, as K (the element's index): j = s·share + lane,
// then every WG-th value up to the share's end; (n, p) of j stepped without dividing (one division at
// the start). The body goes between BN_SHARE_BEGIN(K) and BN_SHARE_END (no variadic macros).
#define BN_SHARE_BEGIN(K)                                                                         \
  {                                                                                               \
    const uint m_ = batch * plane, j0_ = s * share;                                               \
    const uint j1_ = j0_ < m_ && m_ - j0_ > share ? j0_ + share : m_;                             \
    const uint step_n_ = WG / plane, step_p_ = WG - step_n_ * plane;                              \
    uint n_ = (j0_ + lane) / plane, p_ = (j0_ + lane) - n_ * plane;                               \
    for (uint j_ = j0_ + lane; j_ < j1_; j_ += WG) {                                              \
      const size_t K = ((size_t)n_ * channels + c) * plane + p_;
#define BN_SHARE_END                                                                              \
      n_ += step_n_;                                                                              \
      p_ += step_p_;                                                                              \
      if (p_ >= plane) {                                                                          \
        p_ -= plane;                                                                              \
        ++n_;                                                                                     \
      }                                                                                           \
    }                                                                                             \
  }

// Channel c's partials added in order s = lane, lane + WG, …, then the tree: into a[0] and b[0].
static inline void bn_gather_partials(__global const float* partial, const uint splits, const uint channels,
                                      const uint c, const uint lane, __local float* a, __local float* b) {
  float sa = 0.0f, sb = 0.0f;
  for (uint s = lane; s < splits; s += WG) {
    sa += partial[(size_t)c * splits + s];
    sb += partial[((size_t)channels + c) * splits + s];
  }
  bn_tree_sum2(a, b, sa, sb, lane);
}

// Group (s, c): Σ d and Σ d² (d = x − x₀) over share s of channel c.
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void batchnorm_stats_partial(
    __global const float* x, const uint x_off, const uint batch, const uint channels, const uint plane,
    const uint splits, const uint share, __global float* partial) {
  __local float part[WG];
  __local float part_sq[WG];
  const uint s = get_group_id(0), c = get_group_id(1), lane = get_local_id(0);
  x += x_off;
  const float shift = x[(size_t)c * plane];
  float sum = 0.0f, squares = 0.0f;
  BN_SHARE_BEGIN(k)
  bn_stats_terms(x[k], shift, &sum, &squares);
  BN_SHARE_END
  bn_tree_sum2(part, part_sq, sum, squares, lane);
  if (lane == 0) {
    partial[(size_t)c * splits + s] = part[0];
    partial[((size_t)channels + c) * splits + s] = part_sq[0];
  }
}

// Group c: batchnorm_stats' finish from channel c's partials (the arguments after `plane` as its).
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void batchnorm_stats_finish(
    __global const float* partial, const uint splits, __global const float* x, const uint x_off,
    const uint batch, const uint channels, const uint plane, __global float* stats, __global float* moving,
    const uint moving_off, const float momentum, const uint update) {
  __local float part[WG];
  __local float part_sq[WG];
  const uint c = get_group_id(0), lane = get_local_id(0);
  const float fm = (float)(batch * plane);
  const float shift = x[x_off + (size_t)c * plane];
  bn_gather_partials(partial, splits, channels, c, lane, part, part_sq);
  bn_stats_store(part[0], part_sq[0], shift, fm, c, channels, lane, stats, moving, moving_off, momentum,
                 update);
}

// Group (s, c): Σ g and Σ g·x̂ over share s of channel c (batchnorm_backward_sums' terms).
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void batchnorm_backward_sums_partial(
    __global const float* x, const uint x_off, __global const float* dy, const uint dy_off, const uint batch,
    const uint channels, const uint plane, __global const float* stats, const float epsilon,
    __global const float* params, const uint p_off, const uint splits, const uint share,
    __global float* partial) {
  __local float part_dy[WG];
  __local float part_dyx[WG];
  const uint s = get_group_id(0), c = get_group_id(1), lane = get_local_id(0);
  const BnGradConst k = bn_grad_const(stats, epsilon, params, p_off, channels, c);
  x += x_off;
  dy += dy_off;
  float s_dy = 0.0f, s_dyx = 0.0f;
  BN_SHARE_BEGIN(i)
  bn_grad_terms(x[i], dy[i], k, &s_dy, &s_dyx);
  BN_SHARE_END
  bn_tree_sum2(part_dy, part_dyx, s_dy, s_dyx, lane);
  if (lane == 0) {
    partial[(size_t)c * splits + s] = part_dy[0];
    partial[((size_t)channels + c) * splits + s] = part_dyx[0];
  }
}

// Group c: dβ and dγ of channel c from its partials, into grads[g_off + channels + c] and grads[g_off + c].
__kernel __attribute__((reqd_work_group_size(WG, 1, 1))) void batchnorm_backward_sums_finish(
    __global const float* partial, const uint splits, const uint channels, __global float* grads,
    const uint g_off) {
  __local float part_dy[WG];
  __local float part_dyx[WG];
  const uint c = get_group_id(0), lane = get_local_id(0);
  bn_gather_partials(partial, splits, channels, c, lane, part_dy, part_dyx);
  bn_grads_store(part_dy[0], part_dyx[0], c, channels, lane, grads, g_off);
}
