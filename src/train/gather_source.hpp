// What the gather op reads of a split resident on the device: its buffers and how they are stored.
#pragma once

#include "anycl/train/device_dataset.hpp"
#include "ops/gather.hpp"

namespace anycl::detail {

/// The gather op's view of `data` (borrowed: `data` outlives every gather from it).
inline GatherSource gather_source(const DeviceDataset& data) noexcept {
  return {&data.feature_buffer(), data.feature_type(), &data.target_buffer(), data.target_type(),
          data.target_width()};
}

}  // namespace anycl::detail
