// Data sets through the C API: the caller's features (floats, or bytes scaled 1/255 on the device
// as `anycl train` does) with class indices or float targets, copied into a host data set and
// checked there (sizes, label range, finiteness) before any device work.
#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "anycl/error.hpp"
#include "c_api/handles.hpp"
#include "data/feature_checks.hpp"

using namespace anycl::detail::c_api;

namespace {

// count × features values, or ValidationError naming the call when either is 0 or the product overflows.
size_t value_count(const char* call, size_t count, size_t features, const char* what = "features") {
  if (count == 0)
    throw anycl::ValidationError(fmt::format("{}: count is 0 — pass at least one sample", call));
  if (features == 0)
    throw anycl::ValidationError(fmt::format("{}: {} is 0 — pass the values per sample", call, what));
  if (count > std::numeric_limits<size_t>::max() / features)
    throw anycl::ValidationError(fmt::format("{}: {} × {} values overflow", call, count, features));
  return count * features;
}

// Class labels in the C API's words: at least 2 classes, each label in [0, classes).
void check_labels(const char* call, const int32_t* labels, size_t count, size_t classes) {
  if (classes < 2)
    throw anycl::ValidationError(fmt::format(
        "{}: classes is {} — a classifier needs at least 2 classes (for one value per sample, use "
        "anycl_dataset_create_targets)",
        call, classes));
  if (classes > size_t(std::numeric_limits<int32_t>::max()))
    throw anycl::ValidationError(
        fmt::format("{}: classes is {}, more than int32 labels hold", call, classes));
  for (size_t i = 0; i < count; ++i)
    if (labels[i] < 0 || size_t(labels[i]) >= classes)
      throw anycl::ValidationError(fmt::format(
          "{}: labels[{}] is {}, not a class index — labels must be 0 .. classes-1 (classes is {})", call, i,
          labels[i], classes));
}

// Finite values in the C API's words (x, targets).
void check_values(const char* call, const char* name, const float* v, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (!std::isfinite(v[i]))
      throw anycl::ValidationError(fmt::format(
          "{}: {}[{}] is {} — every value must be finite (no NaN or infinity)", call, name, i, v[i]));
}

template <typename Fill>
anycl_status make(const char* call, anycl_dataset** out, Fill&& fill) {
  return guarded([&] {
    require(out, call, "out");
    *out = nullptr;
    auto handle = std::make_unique<anycl_dataset>();
    fill(handle->host);
    *out = handle.release();
  });
}

}  // namespace

extern "C" {

anycl_status anycl_dataset_create_classes(const float* x, size_t count, size_t features,
                                          const int32_t* labels, size_t classes, anycl_dataset** out) {
  const char* call = "anycl_dataset_create_classes";
  return make(call, out, [&](anycl::data::Dataset& ds) {
    const size_t n = value_count(call, count, features);
    require(x, call, "x");
    require(labels, call, "labels");
    check_labels(call, labels, count, classes);
    check_values(call, "x", x, n);
    ds = anycl::data::Dataset::from_features(std::vector<float>(x, x + n),
                                             std::vector<int32_t>(labels, labels + count), features, classes);
  });
}

anycl_status anycl_dataset_create_classes_u8(const uint8_t* x, size_t count, size_t features,
                                             const int32_t* labels, size_t classes, anycl_dataset** out) {
  const char* call = "anycl_dataset_create_classes_u8";
  return make(call, out, [&](anycl::data::Dataset& ds) {
    const size_t n = value_count(call, count, features);
    require(x, call, "x");
    require(labels, call, "labels");
    check_labels(call, labels, count, classes);
    ds.classes.assign(labels, labels + count);
    anycl::detail::check_classes(call, ds.classes, anycl::detail::checked_count(call, n, features), classes);
    ds.count = count;
    ds.rows = 1;
    ds.cols = features;
    ds.num_classes = classes;
    ds.pixels.assign(x, x + n);
  });
}

anycl_status anycl_dataset_create_targets(const float* x, size_t count, size_t features, const float* targets,
                                          size_t outputs, anycl_dataset** out) {
  const char* call = "anycl_dataset_create_targets";
  return make(call, out, [&](anycl::data::Dataset& ds) {
    const size_t n = value_count(call, count, features);
    const size_t t = value_count(call, count, outputs, "outputs");
    require(x, call, "x");
    require(targets, call, "targets");
    check_values(call, "x", x, n);
    check_values(call, "targets", targets, t);
    ds = anycl::data::Dataset::from_targets(std::vector<float>(x, x + n),
                                            std::vector<float>(targets, targets + t), features, outputs);
  });
}

void anycl_dataset_destroy(anycl_dataset* dataset) { delete dataset; }

anycl_status anycl_dataset_count(const anycl_dataset* dataset, size_t* count) {
  return guarded([&] {
    require(dataset, "anycl_dataset_count", "dataset");
    require(count, "anycl_dataset_count", "count");
    *count = dataset->host.count;
  });
}

}  // extern "C"
