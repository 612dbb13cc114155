// Host Philox4x32-10 with random_bits24, dropout_bits24 and uniform01 exactly as cl_kernels/common.cl
// computes them, so dropout masks and initial weights can be checked bit for bit on the host.
#pragma once

#include <array>
#include <cstdint>

namespace anycl::reference {

using Philox4 = std::array<uint32_t, 4>;
using PhiloxKey = std::array<uint32_t, 2>;

/// Philox4x32-10 (Salmon et al., SC'11): 10 rounds over a 4-word counter with a 2-word key.
inline Philox4 philox4x32(Philox4 ctr, PhiloxKey key) {
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = uint64_t(0xD2511F53u) * ctr[0], p1 = uint64_t(0xCD9E8D57u) * ctr[2];
    const uint32_t lo0 = uint32_t(p0), hi0 = uint32_t(p0 >> 32);
    const uint32_t lo1 = uint32_t(p1), hi1 = uint32_t(p1 >> 32);
    ctr = {hi1 ^ ctr[1] ^ key[0], lo1, hi0 ^ ctr[3] ^ key[1], lo0};
    key[0] += 0x9E3779B9u;  // the Weyl key schedule (wraps mod 2^32)
    key[1] += 0xBB67AE85u;
  }
  return ctr;
}

/// 24 random bits of element `index` in stream (seed, step, stream).
inline uint32_t random_bits24(uint64_t seed, uint32_t step, uint32_t stream, uint32_t index) {
  const PhiloxKey key = {uint32_t(seed & 0xffffffffu), uint32_t(seed >> 32)};
  return philox4x32({index, step, stream, 0u}, key)[0] >> 8;
}

/// Dropout's 24 bits for element `index`: in each block of 64 elements, element 16w + j takes word w
/// of the call at counter (16·(index / 64) + j, step, stream, 1), so that one call serves four elements.
inline uint32_t dropout_bits24(uint64_t seed, uint32_t step, uint32_t stream, uint32_t index) {
  const PhiloxKey key = {uint32_t(seed & 0xffffffffu), uint32_t(seed >> 32)};
  return philox4x32({((index >> 6) << 4) | (index & 15u), step, stream, 1u}, key)[(index >> 4) & 3u] >> 8;
}

/// Uniform in [0, 1) with 24 bits of resolution; the conversion is exact, hence bit-identical.
inline float uniform01(uint64_t seed, uint32_t step, uint32_t stream, uint32_t index) {
  return float(random_bits24(seed, step, stream, index)) * (1.0f / 16777216.0f);
}

}  // namespace anycl::reference
