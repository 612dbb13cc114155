// Per-sample shapes of layer inputs and outputs ((features) now, (C, H, W) for convolutions), and
// overflow-checked size arithmetic for sizes that come from files or flags.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace anycl {

/// The shape of one sample, outermost first: {784} for a flat layer, {C, H, W} for an image.
using Shape = std::vector<size_t>;

/// a·b and a+b, or ValidationError naming `what` when the result does not fit in size_t.
size_t checked_mul(size_t a, size_t b, const char* what);
size_t checked_add(size_t a, size_t b, const char* what);
/// Elements in one sample of `shape` (checked).
size_t shape_size(const Shape& shape);
/// "(784)" or "(32, 28, 28)".
std::string shape_string(const Shape& shape);

}  // namespace anycl
