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

/// Any stored types: features (count,features) as bytes (→ v/255) or floats (as given); targets
/// (count,width) as class indices (→ int) or floats. x:(rows,features); t:(rows,width).
template <typename X, typename T, typename TOut>
void gather_typed(const X* features_in, const T* targets_in, const uint32_t* order, size_t first, size_t rows,
                  size_t features, size_t width, float* x, TOut* t) {
  for (size_t r = 0; r < rows; ++r) {
    const size_t sample = order[first + r];
    for (size_t f = 0; f < features; ++f) {
      const X v = features_in[sample * features + f];
      x[r * features + f] = sizeof(X) == 1 ? float(v) / 255.0f : float(v);
    }
    for (size_t c = 0; c < width; ++c) t[r * width + c] = TOut(targets_in[sample * width + c]);
  }
}

}  // namespace anycl::reference
