// Checks shared by the host and device forms of an application's own data (float features with
// class indices or float targets): shapes, label range and finiteness, each error naming the first
// bad index and the call.
#pragma once

#include <fmt/format.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

#include "anycl/error.hpp"

namespace anycl::detail {

/// The number of samples in x (n × d), or ValidationError for an empty x, d == 0 or a ragged size.
inline size_t checked_count(const char* call, size_t x_size, size_t d) {
  if (d == 0) throw ValidationError(fmt::format("{}: d (features per sample) must be at least 1", call));
  if (x_size == 0) throw ValidationError(fmt::format("{}: x is empty — pass at least one sample", call));
  if (x_size % d != 0)
    throw ValidationError(fmt::format(
        "{}: x holds {} values, which is not a whole number of samples of d = {} features — x must be "
        "n rows × d, row-major",
        call, x_size, d));
  if (x_size / d > std::numeric_limits<uint32_t>::max())
    throw ValidationError(fmt::format("{}: {} samples; at most {} fit the device's 32-bit sample order", call,
                                      x_size / d, std::numeric_limits<uint32_t>::max()));
  return x_size / d;
}

/// ValidationError naming the first of the `n` values at `v` that is NaN or infinite.
inline void check_finite(const char* call, const char* name, const float* v, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (!std::isfinite(v[i]))
      throw ValidationError(fmt::format(
          "{}: {}[{}] is {} — replace missing or infinite values before training", call, name, i, v[i]));
}
inline void check_finite(const char* call, const char* name, const std::vector<float>& v) {
  check_finite(call, name, v.data(), v.size());
}

template <typename T>
bool below_zero(T v) {
  if constexpr (std::is_signed_v<T>)
    return v < 0;
  else
    return false;
}

/// ValidationError unless y holds `count` class indices in [0, k), naming the first bad one.
template <typename T>
void check_classes(const char* call, const std::vector<T>& y, size_t count, size_t k) {
  if (k == 0) throw ValidationError(fmt::format("{}: k (the number of classes) must be at least 1", call));
  if (k > size_t(std::numeric_limits<int32_t>::max()))
    throw ValidationError(fmt::format("{}: k = {} classes is more than int32 class indices hold", call, k));
  if (y.size() != count)
    throw ValidationError(
        fmt::format("{}: x holds {} samples but y holds {} labels — pass one class index per row of x", call,
                    count, y.size()));
  for (size_t i = 0; i < y.size(); ++i)
    if (below_zero(y[i]) || size_t(y[i]) >= k)
      throw ValidationError(
          fmt::format("{}: y[{}] = {} is not a class index in [0, {}) — labels must be 0 .. k-1 (k = {})",
                      call, i, y[i], k, k, k));
}

/// ValidationError unless t holds count × outputs finite values.
inline void check_targets(const char* call, const std::vector<float>& t, size_t count, size_t outputs) {
  if (outputs == 0)
    throw ValidationError(fmt::format("{}: outputs (values per target) must be at least 1", call));
  if (t.size() / outputs != count || t.size() % outputs != 0)
    throw ValidationError(
        fmt::format("{}: x holds {} samples, so t must hold {} × {} = {} values, but it holds {}", call,
                    count, count, outputs, count * outputs, t.size()));
  check_finite(call, "t", t);
}

}  // namespace anycl::detail
