// Deterministic per-epoch shuffling.
#include "anycl/train/batch_order.hpp"

#include <numeric>

namespace anycl {
namespace {

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

// Uniform in [0, bound) without modulo bias (rejection of the short last interval).
uint64_t below(uint64_t& state, uint64_t bound) {
  const uint64_t limit = UINT64_MAX - UINT64_MAX % bound;
  uint64_t r;
  do r = splitmix64(state);
  while (r >= limit);
  return r % bound;
}

}  // namespace

std::vector<uint32_t> epoch_order(size_t count, uint64_t seed, uint32_t epoch) {
  std::vector<uint32_t> order(count);
  std::iota(order.begin(), order.end(), 0u);
  uint64_t state = seed ^ (uint64_t(epoch + 1) * 0xD1B54A32D192ED03ull);
  for (size_t i = count; i > 1; --i) std::swap(order[i - 1], order[below(state, i)]);
  return order;
}

}  // namespace anycl
