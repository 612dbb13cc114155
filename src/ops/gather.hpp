// Batch assembly on the device from a resident data set (cl_kernels/gather.cl): features as bytes
// (normalised v/255) or floats, targets as class indices or float rows; one launch per batch, no
// host work and no transfer per step.
#pragma once

#include <map>
#include <utility>

#include "anycl/dtype.hpp"
#include "anycl/tensor.hpp"
#include "runtime/runtime_impl.hpp"

namespace anycl {

/// A data set on the device as the gather reads it.
struct GatherSource {
  const DeviceBuffer* features = nullptr;  // (count, x.cols()) of feature_type
  DType feature_type = DType::u8;          // u8 (normalised v/255) or f32 (as given)
  const DeviceBuffer* targets = nullptr;   // (count, target_width) of target_type
  DType target_type = DType::u8;           // u8 or i32 class indices (width 1), or f32
  size_t target_width = 1;
};

class GatherBatch {
 public:
  /// Fetches the default (bytes, bytes) kernel once; other types are compiled on first use.
  explicit GatherBatch(Runtime& rt);
  /// For r < x.rows(), with s = order[first+r]: x[r,:] = features[s,:] (bytes as v/255) and
  /// targets_out[offset + r·width + c] = targets[s, c]: int32 for class indices, float for f32.
  /// order: uint sample indices.
  void run(const GatherSource& source, const DeviceBuffer& order, size_t first, Tensor& x,
           DeviceBuffer& targets_out, size_t targets_offset = 0);

 private:
  compute::kernel& kernel(DType features, DType targets);

  Runtime& rt_;
  std::map<std::pair<DType, DType>, compute::kernel> kernels_;
};

}  // namespace anycl
