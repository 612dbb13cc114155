// Plain-loop batch gather (cl_kernels/gather.cl): rows picked through the shuffled order, bytes
// normalised as float(v)/255.0f — the same value Dataset::normalized gives on the host.
#pragma once

#include <cstddef>
#include <cstdint>

namespace anycl::reference {

/// images:(count,features) bytes; labels:(count); order: sample indices.
/// x:(rows,features) = images[order[first+r],:]/255; y:(rows) = labels[order[first+r]].
inline void gather_batch(const uint8_t* images, const uint8_t* labels, const uint32_t* order, size_t first,
                         size_t rows, size_t features, float* x, int* y) {
  for (size_t r = 0; r < rows; ++r) {
    const size_t sample = order[first + r];
    for (size_t f = 0; f < features; ++f) x[r * features + f] = float(images[sample * features + f]) / 255.0f;
    y[r] = labels[sample];
  }
}

}  // namespace anycl::reference
