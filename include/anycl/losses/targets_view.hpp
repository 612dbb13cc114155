// A batch's targets on the device: a buffer and an element offset (class indices as int32, or
// float values), as the gather step leaves them for the loss.
#pragma once

#include <cstddef>

#include "anycl/device_buffer.hpp"

namespace anycl {

/// Targets of a batch on the device, `offset` elements into `buffer`.
struct TargetsView {
  const DeviceBuffer* buffer = nullptr;
  size_t offset = 0;  // in elements
};

/// Class labels of a batch: int32, one per row.
using LabelsView = TargetsView;

}  // namespace anycl
