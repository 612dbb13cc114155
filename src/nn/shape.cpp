// Checked size arithmetic: a size read from a model file or a flag must fail, never wrap.
#include "anycl/nn/shape.hpp"

#include <fmt/format.h>

#include <cstdint>

#include "anycl/error.hpp"

namespace anycl {

size_t checked_mul(size_t a, size_t b, const char* what) {
  if (b != 0 && a > SIZE_MAX / b)
    throw ValidationError(
        fmt::format("{} overflows: {} × {} does not fit in 64 bits — use smaller sizes", what, a, b));
  return a * b;
}

size_t checked_add(size_t a, size_t b, const char* what) {
  if (a > SIZE_MAX - b)
    throw ValidationError(
        fmt::format("{} overflows: {} + {} does not fit in 64 bits — use smaller sizes", what, a, b));
  return a + b;
}

size_t shape_size(const Shape& shape) {
  size_t n = 1;
  for (size_t d : shape) n = checked_mul(n, d, "a sample's size");
  return n;
}

std::string shape_string(const Shape& shape) { return fmt::format("({})", fmt::join(shape, ", ")); }

}  // namespace anycl
