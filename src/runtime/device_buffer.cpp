// Device memory with errors that say what failed, on which device, for how many bytes.
#include "anycl/device_buffer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "anycl/error.hpp"
#include "anycl/runtime.hpp"

namespace anycl {
namespace {

std::string mib(size_t bytes) { return fmt::format("{:.1f} MiB", double(bytes) / (1024.0 * 1024.0)); }

}  // namespace

DeviceBuffer::DeviceBuffer(Runtime& rt, size_t bytes, const std::string& what)
    : DeviceBuffer(rt, bytes, what, nullptr) {}

DeviceBuffer::DeviceBuffer(Runtime& rt, size_t bytes, const std::string& what, const void* src)
    : rt_(&rt), bytes_(std::max<size_t>(bytes, 1)), what_(what) {
  const DeviceInfo& d = rt.info();
  if (d.max_alloc_bytes && bytes_ > d.max_alloc_bytes)
    throw ValidationError(fmt::format(
        "the {} needs {} ({} bytes) in one buffer but '{}' allows at most {} per allocation — use a smaller "
        "batch, model or data set, or a device with more memory",
        what_, mib(bytes_), bytes_, d.name, mib(d.max_alloc_bytes)));
  cl_int status = CL_SUCCESS;
  const cl_mem_flags flags = CL_MEM_READ_WRITE | (src ? CL_MEM_COPY_HOST_PTR : 0);
  mem_ = clCreateBuffer(rt.context(), flags, bytes_, const_cast<void*>(src), &status);
  if (status != CL_SUCCESS || mem_ == nullptr) {
    mem_ = nullptr;
    throw DeviceError(fmt::format(
        "'{}' could not allocate the {} ({} bytes; {} of device memory in all): {} — free device memory "
        "(other programs), or use a smaller batch, model or data set",
        d.name, what_, bytes_, mib(d.global_mem_bytes), OpenCLError(status, "clCreateBuffer").what()));
  }
}

DeviceBuffer::DeviceBuffer(const DeviceBuffer& other)
    : rt_(other.rt_), mem_(other.mem_), bytes_(other.bytes_), what_(other.what_) {
  if (mem_) clRetainMemObject(mem_);
}

DeviceBuffer& DeviceBuffer::operator=(const DeviceBuffer& other) {
  if (this != &other) {
    DeviceBuffer copy(other);
    *this = std::move(copy);
  }
  return *this;
}

DeviceBuffer::DeviceBuffer(DeviceBuffer&& other) noexcept
    : rt_(other.rt_),
      mem_(std::exchange(other.mem_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      what_(std::move(other.what_)) {}

DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& other) noexcept {
  if (this != &other) {
    if (mem_) clReleaseMemObject(mem_);
    rt_ = other.rt_;
    mem_ = std::exchange(other.mem_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    what_ = std::move(other.what_);
  }
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (mem_) clReleaseMemObject(mem_);
}

Runtime& DeviceBuffer::runtime() const {
  if (!rt_) throw ValidationError("an empty DeviceBuffer has no device: allocate it first");
  return *rt_;
}

void DeviceBuffer::check_range(size_t bytes, size_t offset, const char* what) const {
  if (!mem_) throw ValidationError(fmt::format("{} of {} bytes on an empty DeviceBuffer", what, bytes));
  if (offset > bytes_ || bytes > bytes_ - offset)
    throw ValidationError(fmt::format("{} of {} bytes at offset {} does not fit the {} ({} bytes)", what,
                                      bytes, offset, what_, bytes_));
}

bool DeviceBuffer::can_start_at(size_t offset) const noexcept {
  const size_t align = rt_ ? rt_->info().base_address_alignment : 0;
  return mem_ && align && offset < bytes_ && offset % align == 0;
}

DeviceBuffer DeviceBuffer::sub_buffer(size_t offset, size_t bytes) const {
  check_range(bytes, offset, "a sub-buffer");
  if (!can_start_at(offset) || bytes == 0)
    throw ValidationError(
        fmt::format("a sub-buffer of the {} must start at a multiple of {} bytes on '{}' and hold at least 1 "
                    "byte, not {} "
                    "bytes at {}",
                    what_, rt_->info().base_address_alignment, rt_->info().name, bytes, offset));
  // OpenCL makes sub-buffers of a buffer only: a sub-buffer's is cut from its parent.
  cl_mem parent = nullptr;
  size_t origin = 0;
  detail::check_cl(clGetMemObjectInfo(mem_, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof parent, &parent, nullptr),
                   "clGetMemObjectInfo", what_);
  if (parent)
    detail::check_cl(clGetMemObjectInfo(mem_, CL_MEM_OFFSET, sizeof origin, &origin, nullptr),
                     "clGetMemObjectInfo", what_);
  const cl_buffer_region region{origin + offset, bytes};
  cl_int status = CL_SUCCESS;
  cl_mem sub = clCreateSubBuffer(parent ? parent : mem_, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &status);
  detail::check_cl(status, "clCreateSubBuffer",
                   fmt::format("{} ({} bytes at {}) on '{}'", what_, bytes, offset, rt_->info().name));
  DeviceBuffer result;
  result.rt_ = rt_;
  result.mem_ = sub;
  result.bytes_ = bytes;
  result.what_ = what_;
  return result;
}

void DeviceBuffer::write(const void* src, size_t bytes, size_t offset, bool blocking) const {
  check_range(bytes, offset, "a write");
  if (bytes == 0) return;
  if (blocking) ++rt_->counters().host_waits;
  detail::check_cl(clEnqueueWriteBuffer(rt_->queue(), mem_, blocking ? CL_TRUE : CL_FALSE, offset, bytes, src,
                                        0, nullptr, nullptr),
                   "clEnqueueWriteBuffer",
                   fmt::format("{} ({} bytes at {}) on '{}'", what_, bytes, offset, rt_->info().name));
}

void DeviceBuffer::read(void* dst, size_t bytes, size_t offset) const {
  check_range(bytes, offset, "a read");
  if (bytes == 0) return;
  ++rt_->counters().host_waits;
  rt_->wait_queued(what_.c_str());  // sleeps until the read is next (Runtime::wait_queued)
  detail::check_cl(clEnqueueReadBuffer(rt_->queue(), mem_, CL_TRUE, offset, bytes, dst, 0, nullptr, nullptr),
                   "clEnqueueReadBuffer",
                   fmt::format("{} ({} bytes at {}) on '{}'", what_, bytes, offset, rt_->info().name));
}

cl_event DeviceBuffer::read_async(void* dst, size_t bytes, size_t offset) const {
  check_range(bytes, offset, "a read");
  cl_event done = nullptr;
  detail::check_cl(clEnqueueReadBuffer(rt_->queue(), mem_, CL_FALSE, offset, bytes, dst, 0, nullptr, &done),
                   "clEnqueueReadBuffer",
                   fmt::format("{} ({} bytes at {}) on '{}'", what_, bytes, offset, rt_->info().name));
  return done;
}

void DeviceBuffer::fill(const void* pattern, size_t pattern_size, size_t offset, size_t bytes) const {
  check_range(bytes, offset, "a fill");
  if (bytes == 0) return;
  detail::check_cl(
      clEnqueueFillBuffer(rt_->queue(), mem_, pattern, pattern_size, offset, bytes, 0, nullptr, nullptr),
      "clEnqueueFillBuffer",
      fmt::format("{} ({} bytes at {}) on '{}'", what_, bytes, offset, rt_->info().name));
}

}  // namespace anycl
