// Element types of device data: what a Tensor and a data set's features and targets hold. One
// small enum so every layer names a type the same way (f16 storage is the next addition).
#pragma once

#include <cstddef>
#include <cstdint>

namespace anycl {

/// float32, uint8 and int32 elements.
enum class DType : uint8_t { f32, u8, i32 };

/// Bytes per element.
constexpr size_t dtype_size(DType t) noexcept { return t == DType::u8 ? 1 : 4; }
/// "f32", "u8" or "i32".
constexpr const char* dtype_name(DType t) noexcept {
  return t == DType::f32 ? "f32" : t == DType::u8 ? "u8" : "i32";
}
/// The same as dtype_name.
constexpr const char* to_string(DType t) noexcept { return dtype_name(t); }

}  // namespace anycl
