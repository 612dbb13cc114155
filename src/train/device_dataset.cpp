// Uploading a split to the device once: checks sizes against the device before allocating, then
// one blocking copy per part.
#include "anycl/train/device_dataset.hpp"

#include <fmt/format.h>

#include <limits>

#include "anycl/error.hpp"
#include "data/feature_checks.hpp"

namespace anycl {
namespace {

// One read-only buffer holding `count` × `width` elements of `type` from `data`.
DeviceBuffer upload_part(Runtime& rt, const void* data, DType type, size_t count, size_t width,
                         const char* what) {
  const size_t max_elements = std::numeric_limits<size_t>::max() / dtype_size(type);
  if (width != 0 && count > max_elements / width)
    throw ValidationError(fmt::format("the data set's {} ({} samples × {} {} values) overflow a size", what,
                                      count, width, dtype_name(type)));
  const size_t bytes = count * width * dtype_size(type);
  if (bytes > rt.info().max_alloc_bytes)
    throw ValidationError(fmt::format(
        "the data set's {} ({} samples × {} {} values) need {} MiB on the device but '{}' allows "
        "{} MiB in one buffer — train on fewer samples (e.g. --limit)",
        what, count, width, dtype_name(type), bytes >> 20, rt.info().name, rt.info().max_alloc_bytes >> 20));
  return DeviceBuffer(rt, bytes, fmt::format("data set's {}", what), bytes ? data : nullptr);
}

[[noreturn]] void inconsistent(const char* part, size_t have, size_t want) {
  throw ValidationError(
      fmt::format("DeviceDataset: the host data set's {} hold {} values but count × width is "
                  "{} — fill count, rows, cols and the vectors consistently",
                  part, have, want));
}

}  // namespace

void DeviceDataset::upload(Runtime& rt, const void* x, DType x_type, const void* t, DType t_type) {
  feature_type_ = x_type;
  target_type_ = t_type;
  features_buffer_ = upload_part(rt, x, x_type, count_, features_, "features");
  targets_buffer_ = upload_part(rt, t, t_type, count_, target_width_, "targets");
}

DeviceDataset::DeviceDataset(Runtime& rt, const data::Dataset& host)
    : count_(host.count), features_(host.features()), num_classes_(host.num_classes) {
  if (count_ == 0) throw ValidationError("the data set is empty");
  if (features_ == 0) throw ValidationError("the data set has no features (rows × cols is 0)");
  const bool floats = !host.values.empty();
  const size_t x_size = floats ? host.values.size() : host.pixels.size();
  if (x_size / features_ != count_ || x_size % features_ != 0)
    inconsistent(floats ? "float features" : "pixels", x_size, count_ * features_);
  const void* x = floats ? static_cast<const void*>(host.values.data()) : host.pixels.data();
  const DType x_type = floats ? DType::f32 : DType::u8;
  if (!host.targets.empty()) {
    target_width_ = host.target_width;
    num_classes_ = 0;
    detail::check_targets("DeviceDataset", host.targets, count_, target_width_);
    upload(rt, x, x_type, host.targets.data(), DType::f32);
  } else if (!host.classes.empty()) {
    detail::check_classes("DeviceDataset", host.classes, count_, num_classes_);
    host_labels_ = host.classes;
    upload(rt, x, x_type, host.classes.data(), DType::i32);
  } else {
    if (host.labels.size() != count_) inconsistent("labels", host.labels.size(), count_);
    if (num_classes_ != 0) detail::check_classes("DeviceDataset", host.labels, count_, num_classes_);
    host_labels_.assign(host.labels.begin(), host.labels.end());
    upload(rt, x, x_type, host.labels.data(), DType::u8);
  }
}

DeviceDataset DeviceDataset::from_features(Runtime& rt, const std::vector<float>& x,
                                           const std::vector<int32_t>& y, size_t d, size_t k) {
  const char* call = "DeviceDataset::from_features";
  DeviceDataset ds;
  ds.count_ = detail::checked_count(call, x.size(), d);
  detail::check_classes(call, y, ds.count_, k);
  detail::check_finite(call, "x", x);
  ds.features_ = d;
  ds.num_classes_ = k;
  ds.host_labels_ = y;
  ds.upload(rt, x.data(), DType::f32, y.data(), DType::i32);
  return ds;
}

DeviceDataset DeviceDataset::from_features(Runtime& rt, const std::vector<float>& x,
                                           const std::vector<uint32_t>& y, size_t d, size_t k) {
  detail::check_classes("DeviceDataset::from_features", y, y.size(), k);  // before converting to int32
  return from_features(rt, x, std::vector<int32_t>(y.begin(), y.end()), d, k);
}

DeviceDataset DeviceDataset::from_targets(Runtime& rt, const std::vector<float>& x,
                                          const std::vector<float>& t, size_t d, size_t outputs) {
  const char* call = "DeviceDataset::from_targets";
  DeviceDataset ds;
  ds.count_ = detail::checked_count(call, x.size(), d);
  detail::check_targets(call, t, ds.count_, outputs);
  detail::check_finite(call, "x", x);
  ds.features_ = d;
  ds.target_width_ = outputs;
  ds.upload(rt, x.data(), DType::f32, t.data(), DType::f32);
  return ds;
}

}  // namespace anycl
