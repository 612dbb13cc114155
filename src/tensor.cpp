// Tensor allocation, transfers and views; every OpenCL status is checked.
#include "anycl/tensor.hpp"

#include <fmt/format.h>

#include <numeric>

#include "anycl/error.hpp"

namespace anycl {
namespace {
size_t product(const std::vector<size_t>& shape, size_t from) {
  return std::accumulate(shape.begin() + std::min(from, shape.size()), shape.end(), size_t(1),
                         std::multiplies<>());
}
}  // namespace

Tensor::Tensor(Runtime& rt, std::vector<size_t> shape) : rt_(&rt), shape_(std::move(shape)) {
  const size_t bytes = size() * sizeof(float);
  if (bytes > rt.info().max_alloc_bytes)
    throw ValidationError(fmt::format(
        "tensor {} needs {} MiB but '{}' allows at most {} MiB in one buffer — use a smaller batch or layer",
        shape_string(), bytes >> 20, rt.info().name, rt.info().max_alloc_bytes >> 20));
  cl_int status = CL_SUCCESS;
  cl_mem mem =
      clCreateBuffer(rt.context().get(), CL_MEM_READ_WRITE, std::max<size_t>(bytes, 4), nullptr, &status);
  detail::check_cl(status, "clCreateBuffer", fmt::format("tensor {} ({} bytes)", shape_string(), bytes));
  buffer_ = compute::buffer(mem, /*retain=*/false);
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

void Tensor::upload(const float* data, size_t n, bool blocking) {
  if (n != size()) throw ValidationError(fmt::format("upload: {} values for tensor {}", n, shape_string()));
  if (n == 0) return;
  if (blocking) ++rt_->counters().host_waits;
  detail::check_cl(
      clEnqueueWriteBuffer(rt_->queue().get(), mem(), blocking ? CL_TRUE : CL_FALSE, offset_ * sizeof(float),
                           n * sizeof(float), data, 0, nullptr, nullptr),
      "clEnqueueWriteBuffer", "tensor " + shape_string());
}

std::vector<float> Tensor::download() const {
  std::vector<float> out(size());
  if (out.empty()) return out;
  ++rt_->counters().host_waits;
  detail::check_cl(clEnqueueReadBuffer(rt_->queue().get(), mem(), CL_TRUE, offset_ * sizeof(float),
                                       out.size() * sizeof(float), out.data(), 0, nullptr, nullptr),
                   "clEnqueueReadBuffer", "tensor " + shape_string());
  return out;
}

void Tensor::fill(float value) {
  if (size() == 0) return;
  detail::check_cl(clEnqueueFillBuffer(rt_->queue().get(), mem(), &value, sizeof(value),
                                       offset_ * sizeof(float), size() * sizeof(float), 0, nullptr, nullptr),
                   "clEnqueueFillBuffer", "tensor " + shape_string());
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
