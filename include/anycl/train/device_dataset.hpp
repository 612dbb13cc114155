// A data split resident on the device as bytes (4× smaller than floats): batches are gathered
// and normalised on the device, so a training step moves no data between host and device.
#pragma once

#include "anycl/data/dataset.hpp"
#include "anycl/runtime.hpp"

namespace anycl {

class DeviceDataset {
 public:
  /// Uploads images and labels (blocking, once). Throws ValidationError when the images do not
  /// fit one device allocation, saying how much was asked and how much the device allows.
  DeviceDataset(Runtime& rt, const data::Dataset& host);

  /// Samples, values per sample, and classes.
  size_t count() const noexcept { return count_; }
  size_t features() const noexcept { return features_; }
  size_t num_classes() const noexcept { return num_classes_; }
  /// The device copies: images as uchar (count, features), labels as uchar (count).
  const compute::buffer& images() const noexcept { return images_; }  // uchar (count, features)
  const compute::buffer& labels() const noexcept { return labels_; }  // uchar (count)
  /// The host labels (for confusion matrices and checks).
  const std::vector<uint8_t>& host_labels() const noexcept { return host_labels_; }

 private:
  size_t count_, features_, num_classes_;
  compute::buffer images_, labels_;
  std::vector<uint8_t> host_labels_;
};

}  // namespace anycl
