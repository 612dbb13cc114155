// Tensor: a dtype, a shape and a device buffer (and an element offset, so a tensor can be a
// view of consecutive rows of another, as batching needs). Row-major.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "anycl/device_buffer.hpp"
#include "anycl/dtype.hpp"
#include "anycl/runtime.hpp"

namespace anycl {

class Tensor {
 public:
  Tensor() = default;
  /// Allocates an uninitialised tensor of `shape` and element type `dtype` on the runtime's device.
  Tensor(Runtime& rt, std::vector<size_t> shape, DType dtype = DType::f32);
  /// A tensor holding a copy of `values` (values.size() must equal the shape's product).
  static Tensor from_host(Runtime& rt, std::vector<size_t> shape, const std::vector<float>& values);

  /// The dimensions, outermost first.
  const std::vector<size_t>& shape() const noexcept { return shape_; }
  /// Number of elements.
  size_t size() const noexcept;
  /// The element type, and its size in bytes.
  DType dtype() const noexcept { return dtype_; }
  size_t element_size() const noexcept { return dtype_size(dtype_); }
  /// First dimension, and the product of the others (a matrix view of the tensor).
  size_t rows() const noexcept { return shape_.empty() ? 0 : shape_[0]; }
  size_t cols() const noexcept;
  /// "(128, 784)".
  std::string shape_string() const;

  /// The device buffer (shared by views), and its raw handle for OpenCL/CLBlast calls.
  const DeviceBuffer& buffer() const noexcept { return buffer_; }
  cl_mem mem() const noexcept { return buffer_.mem(); }
  /// Offset of element 0 in the buffer, in elements.
  size_t offset() const noexcept { return offset_; }

  /// Copies `n` floats from the host (blocking unless `blocking` is false; then `data` must
  /// outlive the copy).
  void upload(const float* data, size_t n, bool blocking = true);
  /// Copies `values` from the host (blocking).
  void upload(const std::vector<float>& values) { upload(values.data(), values.size()); }
  /// Copies the tensor to the host (blocking).
  std::vector<float> download() const;
  /// Copies the tensor's `n` floats (n must equal size()) into `data` (blocking).
  void download(float* data, size_t n) const;
  /// Typed transfers for i32 and u8 tensors (blocking); ValidationError on a dtype mismatch.
  void upload(const std::vector<int32_t>& values);
  void upload(const std::vector<uint8_t>& values);
  std::vector<int32_t> download_i32() const;
  std::vector<uint8_t> download_u8() const;
  /// Sets every element to `value` (enqueued, no wait).
  void fill(float value);

  /// A view of rows [begin, begin+count) sharing this tensor's buffer.
  Tensor rows(size_t begin, size_t count) const;
  /// The same elements under another shape with the same element count.
  Tensor reshaped(std::vector<size_t> shape) const;

  /// The runtime whose device holds the tensor.
  Runtime& runtime() const { return *rt_; }

 private:
  Runtime* rt_ = nullptr;
  void transfer(bool write, void* data, size_t n, DType type, bool blocking) const;

  std::vector<size_t> shape_;
  DType dtype_ = DType::f32;
  DeviceBuffer buffer_;
  size_t offset_ = 0;
};

}  // namespace anycl
