// Shared by every program (prepended at build time): the counter-based RNG that makes
// dropout masks and initial weights identical on every device, and small helpers.
#ifndef T
#define T float
#endif

// Philox4x32-10 (Salmon et al., SC'11): 4×32-bit counter, 2×32-bit key, 10 rounds.
static inline uint4 philox4x32(uint4 ctr, uint2 key) {
  for (int round = 0; round < 10; ++round) {
    const uint lo0 = 0xD2511F53u * ctr.x, hi0 = mul_hi(0xD2511F53u, ctr.x);
    const uint lo1 = 0xCD9E8D57u * ctr.z, hi1 = mul_hi(0xCD9E8D57u, ctr.z);
    ctr = (uint4)(hi1 ^ ctr.y ^ key.x, lo1, hi0 ^ ctr.w ^ key.y, lo0);
    key += (uint2)(0x9E3779B9u, 0xBB67AE85u);
  }
  return ctr;
}

// 24 random bits of element `index` in stream (seed, step, stream): exact on every device.
static inline uint random_bits24(uint seed_lo, uint seed_hi, uint step, uint stream, uint index) {
  return philox4x32((uint4)(index, step, stream, 0u), (uint2)(seed_lo, seed_hi)).x >> 8;
}

// Uniform in [0, 1) with 24 bits of resolution (the conversion is exact).
static inline float uniform01(uint seed_lo, uint seed_hi, uint step, uint stream, uint index) {
  return (float)random_bits24(seed_lo, seed_hi, step, stream, index) * (1.0f / 16777216.0f);
}
