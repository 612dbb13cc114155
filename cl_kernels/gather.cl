// Builds a training batch on the device from the resident data set: rows picked through the
// epoch's shuffled index list. Build options choose the stored types (defaults: bytes, bytes):
//   -DX_F32  features are floats, copied as given (default: bytes, normalised v/255 to [0, 1])
//   -DT_I32  class indices stored as int;  -DT_F32  float targets, `width` per sample
//            (default: class indices stored as bytes). Class indices are written as int.
// features:(count, features); order: sample indices; x:(rows, features); t:(rows, width).
#ifdef X_F32
typedef float x_elem;
#else
typedef uchar x_elem;
#endif
#if defined(T_F32)
typedef float t_elem;
typedef float t_out;
#elif defined(T_I32)
typedef int t_elem;
typedef int t_out;
#else
typedef uchar t_elem;
typedef int t_out;
#endif

// No contraction in this file: feature_value's steps are exact as written, but a compiler fusing q's
// own product into the last add, fma(v, 1/255, r·(1/255)), would round 46 bytes wrongly.
#pragma OPENCL FP_CONTRACT OFF

static inline float feature_value(const x_elem stored) {
#ifdef X_F32
  return stored;
#else
  // v·(1/255) alone differs from v/255 in the last bit for about half the byte values. The exact
  // residual r = v - 255q is (v - 256q) + q, each step exact by Sterbenz's lemma (no fma: a CPU class
  // without one, PoCL's AVX library, emulates fma() in software, 0.40 ms for a 128×784 batch where
  // this takes 0.08 ms), and q + r·(1/255) is then the correctly rounded v/255 for every byte (checked
  // for all 256, as written and with the last step as fma(r, 1/255, q)) — the value the host's
  // Dataset::normalized computes.
  const float v = convert_float(stored);
  const float q = v * (1.0f / 255.0f);
  const float r = (v - q * 256.0f) + q;
  return q + r * (1.0f / 255.0f);
#endif
}

// The same, sixteen features at once (one vector load and store; the rounding is per lane).
static inline float16 feature_values16(const __global x_elem* p) {
#ifdef X_F32
  return vload16(0, p);
#else
  const float16 v = convert_float16(vload16(0, p));
  const float16 q = v * (1.0f / 255.0f);
  const float16 r = (v - q * 256.0f) + q;
  return q + r * (1.0f / 255.0f);
#endif
}

// One work-item per sixteen columns of a row max(features, width) wide — a 2-D range: x the column
// group (padded: bound-checked), y the row, so no index is divided. Columns c < features write x
// (a whole group by vector load and store, the row's last partial group element by element),
// columns c < width write the target. On PoCL, 16 columns per work-item took 0.08 ms for a
// 128×784 byte batch where one column per work-item took 0.17 ms (4 columns: 0.11 ms).
__kernel void gather_batch(__global const x_elem* features_in, __global const t_elem* targets_in,
                           __global const uint* order, const uint first, const uint rows, const uint features,
                           const uint width, __global float* x, const uint x_off, __global t_out* t,
                           const uint t_off) {
  const uint c0 = 16 * get_global_id(0), r = get_global_id(1);
  if (c0 >= max(features, width) || r >= rows) return;
  const ulong sample = order[first + r];  // 64-bit: sample·features may pass 2^32
  const __global x_elem* in = features_in + sample * features;
  __global float* out = x + x_off + (ulong)r * features;
  if (c0 + 16 <= features) {
    vstore16(feature_values16(in + c0), 0, out + c0);
  } else {
    for (uint c = c0; c < min(c0 + 16, features); ++c) out[c] = feature_value(in[c]);
  }
  for (uint c = c0; c < min(c0 + 16, width); ++c)
    t[t_off + (ulong)r * width + c] = (t_out)targets_in[sample * width + c];
}
