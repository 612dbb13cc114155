// Element types a Tensor can hold on the device (f16 storage is the next addition).
#pragma once

#include <cstddef>

namespace anycl {

/// A tensor's element type.
enum class DType { f32, u8, i32 };

/// Bytes per element.
constexpr size_t dtype_size(DType t) noexcept { return t == DType::u8 ? 1 : 4; }
/// "f32", "u8" or "i32".
constexpr const char* to_string(DType t) noexcept {
  return t == DType::f32 ? "f32" : t == DType::u8 ? "u8" : "i32";
}

}  // namespace anycl
