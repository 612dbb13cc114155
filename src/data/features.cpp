// An application's own data on the host: float features with class indices or float targets, as
// one data::Dataset, so the same type feeds every path (one device or data-parallel).
#include "anycl/data/dataset.hpp"

#include <type_traits>

#include "feature_checks.hpp"

namespace anycl::data {
namespace {

Dataset with_features(std::vector<float> x, size_t d, size_t count) {
  Dataset ds;
  ds.count = count;
  ds.rows = 1;
  ds.cols = d;
  ds.values = std::move(x);
  return ds;
}

template <typename T>
Dataset classified(std::vector<float> x, const std::vector<T>& y, size_t d, size_t k) {
  const char* call = "Dataset::from_features";
  const size_t count = detail::checked_count(call, x.size(), d);
  detail::check_classes(call, y, count, k);
  detail::check_finite(call, "x", x);
  Dataset ds = with_features(std::move(x), d, count);
  ds.num_classes = k;
  ds.classes.assign(y.begin(), y.end());
  return ds;
}

}  // namespace

Dataset Dataset::from_features(std::vector<float> x, const std::vector<int32_t>& y, size_t d, size_t k) {
  return classified(std::move(x), y, d, k);
}

Dataset Dataset::from_features(std::vector<float> x, const std::vector<uint32_t>& y, size_t d, size_t k) {
  return classified(std::move(x), y, d, k);
}

Dataset Dataset::first(size_t n) const {
  if (n > count)
    throw ValidationError(fmt::format("Dataset::first: {} samples asked from a set of {}", n, count));
  // Each part keeps its first n rows; an empty part (a form not in use) stays empty.
  auto head = [n](const auto& v, size_t width) {
    using V = std::decay_t<decltype(v)>;
    if (v.empty()) return V{};
    if (v.size() < n * width)
      throw ValidationError(fmt::format("Dataset::first: a part holds {} values, fewer than {} samples × {}",
                                        v.size(), n, width));
    return V(v.begin(), v.begin() + std::ptrdiff_t(n * width));
  };
  Dataset out;
  out.count = n, out.rows = rows, out.cols = cols, out.num_classes = num_classes,
  out.target_width = target_width;
  out.pixels = head(pixels, features());
  out.values = head(values, features());
  out.labels = head(labels, 1);
  out.classes = head(classes, 1);
  out.targets = head(targets, target_width);
  return out;
}

Dataset Dataset::from_targets(std::vector<float> x, std::vector<float> t, size_t d, size_t outputs) {
  const char* call = "Dataset::from_targets";
  const size_t count = detail::checked_count(call, x.size(), d);
  detail::check_targets(call, t, count, outputs);
  detail::check_finite(call, "x", x);
  Dataset ds = with_features(std::move(x), d, count);
  ds.targets = std::move(t);
  ds.target_width = outputs;
  return ds;
}

}  // namespace anycl::data
