// Tensor allocation, transfers and views; every OpenCL status is checked.
#include "anycl/tensor.hpp"

#include <fmt/format.h>

#include <cstdint>
#include <numeric>

#include "anycl/error.hpp"
#include "ops/kernel_call.hpp"

namespace anycl {
namespace {
size_t product(const std::vector<size_t>& shape, size_t from) {
  return std::accumulate(shape.begin() + std::min(from, shape.size()), shape.end(), size_t(1),
                         std::multiplies<>());
}
}  // namespace

Tensor::Tensor(Runtime& rt, std::vector<size_t> shape, DType dtype)
    : rt_(&rt), shape_(std::move(shape)), dtype_(dtype) {
  for (size_t i = 0, n = 1; i < shape_.size(); ++i) {
    if (shape_[i] != 0 && n > SIZE_MAX / element_size() / shape_[i])
      throw ValidationError(fmt::format("tensor {} is too large to address", shape_string()));
    n *= shape_[i];
  }
  buffer_ = DeviceBuffer(rt, std::max<size_t>(size() * element_size(), 4), "tensor " + shape_string());
}

Tensor Tensor::from_host(Runtime& rt, std::vector<size_t> shape, const std::vector<float>& values) {
  Tensor t(rt, std::move(shape));
  if (values.size() != t.size())
    throw ValidationError(fmt::format("from_host: {} values for shape {}", values.size(), t.shape_string()));
  t.upload(values);
  return t;
}

size_t Tensor::size() const noexcept { return shape_.empty() ? 0 : product(shape_, 0); }
size_t Tensor::cols() const noexcept { return shape_.empty() ? 0 : product(shape_, 1); }

std::string Tensor::shape_string() const { return fmt::format("({})", fmt::join(shape_, ", ")); }

void Tensor::transfer(bool write, void* data, size_t n, DType type, bool blocking) const {
  const char* call = write ? "upload" : "download";
  if (type != dtype_)
    throw ValidationError(fmt::format("{}: {} values for a {} tensor {}", call, to_string(type),
                                      to_string(dtype_), shape_string()));
  if (n != size()) throw ValidationError(fmt::format("{}: {} values for tensor {}", call, n, shape_string()));
  if (n == 0) return;
  const size_t es = element_size();
  if (write)
    buffer_.write(data, n * es, offset_ * es, blocking);
  else
    buffer_.read(data, n * es, offset_ * es);
}

void Tensor::upload(const float* data, size_t n, bool blocking) {
  transfer(true, const_cast<float*>(data), n, DType::f32, blocking);
}

void Tensor::upload(const std::vector<int32_t>& values) {
  transfer(true, const_cast<int32_t*>(values.data()), values.size(), DType::i32, true);
}

void Tensor::upload(const std::vector<uint8_t>& values) {
  transfer(true, const_cast<uint8_t*>(values.data()), values.size(), DType::u8, true);
}

std::vector<float> Tensor::download() const {
  std::vector<float> out(size());
  transfer(false, out.data(), out.size(), DType::f32, true);
  return out;
}

void Tensor::download(float* data, size_t n) const { transfer(false, data, n, DType::f32, true); }

std::vector<int32_t> Tensor::download_i32() const {
  std::vector<int32_t> out(size());
  transfer(false, out.data(), out.size(), DType::i32, true);
  return out;
}

std::vector<uint8_t> Tensor::download_u8() const {
  std::vector<uint8_t> out(size());
  transfer(false, out.data(), out.size(), DType::u8, true);
  return out;
}

void Tensor::fill(float value) {
  if (dtype_ != DType::f32)
    throw ValidationError(
        fmt::format("fill: a float value for a {} tensor {}", to_string(dtype_), shape_string()));
  if (size() == 0) return;
  // A kernel rather than clEnqueueFillBuffer: Oclgrind 21.10 does not record what the latter writes
  // as initialised (tools/oclgrind/fill_buffer_repro.c), so its checks would flag every later read.
  Runtime& rt = runtime();
  compute::kernel k = detail::kernel(rt, "init", "fill_value");
  detail::set_args(k, mem(), detail::u32(offset_, "offset"), detail::u32(size(), "size"), cl_float(value));
  detail::launch_1d(rt, k, size());
}

Tensor Tensor::rows(size_t begin, size_t count) const {
  if (shape_.empty() || begin + count > shape_[0])
    throw ValidationError(
        fmt::format("rows({}, {}) out of range for tensor {}", begin, count, shape_string()));
  Tensor view = *this;
  view.shape_[0] = count;
  view.offset_ = offset_ + begin * cols();
  return view;
}

Tensor Tensor::reshaped(std::vector<size_t> shape) const {
  Tensor view = *this;
  view.shape_ = std::move(shape);
  if (view.size() != size())
    throw ValidationError(fmt::format("cannot reshape {} to {}", shape_string(), view.shape_string()));
  return view;
}

}  // namespace anycl
