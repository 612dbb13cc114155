// Shared by every program (prepended at build time): the counter-based RNG that makes
// dropout masks and initial weights identical on every device, and small helpers.
#ifndef T
#define T float
#endif

// Philox4x32-10 (Salmon et al., SC'11): 4×32-bit counter, 2×32-bit key, 10 rounds; all four
// output words. Scalar words and a fully unrolled loop, so a CPU compiler (PoCL) vectorises it
// across work-items: the uint4 form with a rolled loop ran scalar, ~100 ns per element. Each
// round's products are 32x32->64-bit multiplies giving low and high words at once: mul_hi plus a
// separate low multiply made dropout on PoCL (AVX-512) take twice as long.
static inline uint4 philox4x32(uint c0, uint c1, uint c2, uint c3, uint k0, uint k1) {
#pragma unroll
  for (int round = 0; round < 10; ++round) {
    const ulong p0 = (ulong)c0 * 0xD2511F53u, p1 = (ulong)c2 * 0xCD9E8D57u;
    const uint lo0 = (uint)p0, hi0 = (uint)(p0 >> 32);
    const uint lo1 = (uint)p1, hi1 = (uint)(p1 >> 32);
    c0 = hi1 ^ c1 ^ k0;
    c1 = lo1;
    c2 = hi0 ^ c3 ^ k1;
    c3 = lo0;
    k0 += 0x9E3779B9u;
    k1 += 0xBB67AE85u;
  }
  return (uint4)(c0, c1, c2, c3);
}

// 24 random bits of element `index` in stream (seed, step, stream): exact on every device (the
// first word of one Philox call per element; initial weights).
static inline uint random_bits24(uint seed_lo, uint seed_hi, uint step, uint stream, uint index) {
  return philox4x32(index, step, stream, 0u, seed_lo, seed_hi).x >> 8;
}

// Uniform in [0, 1) with 24 bits of resolution (the conversion is exact).
static inline float uniform01(uint seed_lo, uint seed_hi, uint step, uint stream, uint index) {
  return (float)random_bits24(seed_lo, seed_hi, step, stream, index) * (1.0f / 16777216.0f);
}

// Activations (act: 0 linear, 1 relu, 2 tanh, 3 sigmoid, 4 leaky_relu with Keras' slope 0.2,
// 5 elu with alpha 1, 6 gelu in Keras' default exact form z·Φ(z) = z/2·(1 + erf(z/√2)); as
// anycl::Activation), for the dense and convolution output stages.
#define ACT_GELU 6
static inline float activate(const float z, const int act) {
  switch (act) {
    case 1: return z > 0.0f ? z : 0.0f;  // not fmax(z, 0), whose −0 may come out as either zero
    case 2: return tanh(z);
    case 3: return 1.0f / (1.0f + exp(-z));
    case 4: return z > 0.0f ? z : 0.2f * z;
    case 5: return z > 0.0f ? z : expm1(z);
    case 6: return 0.5f * z * (1.0f + erf(z * 0.70710678118654752f));
    default: return z;
  }
}

// activate() over sixteen lanes: the vector form of the bias/activation kernels (activation.cl, and
// the Dense-with-dropout forward in dropout.cl), so both produce the same bits.
static inline float16 activate16(const float16 z, const int act) {
  switch (act) {
    case 1: return select((float16)(0.0f), z, z > (float16)(0.0f));  // as activate()
    case 2: return tanh(z);
    case 3: return 1.0f / (1.0f + exp(-z));
    case 4: return select(0.2f * z, z, z > (float16)(0.0f));
    case 5: return select(expm1(z), z, z > (float16)(0.0f));
    case 6: return 0.5f * z * (1.0f + erf(z * 0.70710678118654752f));
    default: return z;
  }
}

// The same over eight lanes (the direct convolution's rows, conv_direct.cl): activate16's formulas, so the
// same bits (the eight upper lanes repeat the lower ones).
static inline float8 activate8(const float8 z, const int act) { return activate16((float16)(z, z), act).lo; }

// y = act(y + bias) for the sixteen elements of a (rows, cols) row-major y from i0 (n = rows·cols,
// y and bias already offset): one vector load and store where they lie in one row, element by
// element where they cross a row's end or the tensor's.
static inline void bias_activation16(__global float* y, __global const float* bias, const size_t i0,
                                     const size_t n, const uint cols, const int act) {
  size_t j = i0 % cols;
  if (i0 + 16 <= n && j + 16 <= cols) {
    vstore16(activate16(vload16(0, y + i0) + vload16(0, bias + j), act), 0, y + i0);
    return;
  }
  for (size_t i = i0; i < min(i0 + 16, n); ++i) {
    y[i] = activate(y[i] + bias[j], act);
    if (++j == cols) j = 0;
  }
}

// The derivative from what the layer kept: for every activation but gelu that is the output y (so
// the forward input need not be kept: leaky_relu's y > 0 iff z > 0, elu's e^z = y + 1); gelu has no
// derivative in terms of its output (it is not monotonic), so a gelu layer keeps its input z, which
// the forward kernels write beside y, and passes z here: Φ(z) + z·φ(z).
static inline float activate_grad(const float kept, const int act) {
  switch (act) {
    case 1: return kept > 0.0f ? 1.0f : 0.0f;
    case 2: return 1.0f - kept * kept;
    case 3: return kept * (1.0f - kept);
    case 4: return kept > 0.0f ? 1.0f : 0.2f;
    case 5: return kept > 0.0f ? 1.0f : kept + 1.0f;
    case 6:
      return 0.5f * (1.0f + erf(kept * 0.70710678118654752f)) +
             kept * 0.39894228040143268f * exp(-0.5f * kept * kept);
    default: return 1.0f;
  }
}
