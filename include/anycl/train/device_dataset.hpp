// A data split resident on the device: features as bytes (4× smaller than floats, normalised v/255
// when gathered) or floats, targets as class indices (bytes or int32) or float rows. Batches are
// gathered on the device, so a training step moves no data between host and device.
//
//   auto train = anycl::DeviceDataset::from_features(rt, x, y, d, k);  // x: n × d floats, y: n labels
#pragma once

#include <cstdint>
#include <vector>

#include "anycl/data/dataset.hpp"
#include "anycl/dtype.hpp"
#include "anycl/runtime.hpp"

namespace anycl {

class DeviceDataset {
 public:
  /// Uploads a host split (blocking, once): bytes or float features, byte or int32 class indices
  /// or float targets, as the Dataset holds them. ValidationError when a part does not fit one
  /// device allocation (naming the sizes and the device) or the split is empty or inconsistent.
  DeviceDataset(Runtime& rt, const data::Dataset& host);
  /// Float features x (n rows × d, row-major) with class indices y in [0, k), stored as int32 (any
  /// number of classes). ValidationError naming the first bad index for a label outside [0, k) or
  /// a feature that is NaN or infinite, and for sizes that do not match.
  static DeviceDataset from_features(Runtime& rt, const std::vector<float>& x, const std::vector<int32_t>& y,
                                     size_t d, size_t k);
  static DeviceDataset from_features(Runtime& rt, const std::vector<float>& x, const std::vector<uint32_t>& y,
                                     size_t d, size_t k);
  /// Float features x (n × d) with float targets t (n × outputs), for regression.
  static DeviceDataset from_targets(Runtime& rt, const std::vector<float>& x, const std::vector<float>& t,
                                    size_t d, size_t outputs);

  /// Samples and values per sample.
  size_t count() const noexcept { return count_; }
  size_t features() const noexcept { return features_; }
  /// Classes of a classification set; 0 for float targets.
  size_t num_classes() const noexcept { return num_classes_; }
  /// How features and targets are stored: u8 or f32; u8 or i32 class indices, or f32 targets.
  DType feature_type() const noexcept { return feature_type_; }
  DType target_type() const noexcept { return target_type_; }
  /// Whether the targets are class indices (not float targets).
  bool has_classes() const noexcept { return target_type_ != DType::f32; }
  /// Values per target: 1 for class indices, the outputs for float targets.
  size_t target_width() const noexcept { return target_width_; }
  /// The device copies: features (count, features) and targets (count, target_width).
  const DeviceBuffer& feature_buffer() const noexcept { return features_buffer_; }
  const DeviceBuffer& target_buffer() const noexcept { return targets_buffer_; }
  /// The host class indices (for confusion matrices and checks); empty for float targets.
  const std::vector<int32_t>& host_labels() const noexcept { return host_labels_; }

 private:
  DeviceDataset() = default;
  void upload(Runtime& rt, const void* x, DType x_type, const void* t, DType t_type);

  size_t count_ = 0, features_ = 0, num_classes_ = 0, target_width_ = 1;
  DType feature_type_ = DType::u8, target_type_ = DType::u8;
  DeviceBuffer features_buffer_, targets_buffer_;
  std::vector<int32_t> host_labels_;
};

}  // namespace anycl
