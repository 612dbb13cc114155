// The order in which an epoch visits the samples: a Fisher–Yates shuffle driven by our own
// splitmix64 generator, so a seed gives the same order with every compiler and standard library
// (std::shuffle's algorithm is implementation-defined).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace anycl {

/// A permutation of 0..count-1 for `epoch`, determined by (seed, epoch) alone.
std::vector<uint32_t> epoch_order(size_t count, uint64_t seed, uint32_t epoch);

}  // namespace anycl
