// An application's own data on the host: float features with class indices or float targets, as
// one data::Dataset, so the same type feeds every path (one device or data-parallel).
#include "anycl/data/dataset.hpp"
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
