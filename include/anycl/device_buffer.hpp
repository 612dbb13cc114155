// DeviceBuffer: a block of memory on one runtime's device — the one owner of device memory in
// the library. Allocation failures and failed transfers are anycl::Errors naming the size, what
// the buffer is for and the device; every blocking transfer is counted as a host wait.
#pragma once

#include <cstddef>
#include <string>

#include "anycl/opencl.hpp"

namespace anycl {

class Runtime;

class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  /// Allocates `bytes` (at least 1) on `rt`'s device. `what` names the buffer in errors. Throws
  /// ValidationError when `bytes` exceeds the device's largest allocation, DeviceError when the
  /// device refuses the allocation.
  DeviceBuffer(Runtime& rt, size_t bytes, const std::string& what);
  /// Allocates and fills from `src` (`bytes` of it) in one call.
  DeviceBuffer(Runtime& rt, size_t bytes, const std::string& what, const void* src);
  DeviceBuffer(const DeviceBuffer& other);  // shares the memory (reference-counted)
  DeviceBuffer& operator=(const DeviceBuffer& other);
  DeviceBuffer(DeviceBuffer&& other) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept;
  ~DeviceBuffer();

  /// Size in bytes; the raw handle (for kernels and CLBlast); whether it holds memory.
  size_t bytes() const noexcept { return bytes_; }
  cl_mem mem() const noexcept { return mem_; }
  explicit operator bool() const noexcept { return mem_ != nullptr; }
  /// The runtime whose device holds the memory (ValidationError for an empty buffer).
  Runtime& runtime() const;

  /// The `bytes` of this buffer from byte `offset`, as a buffer of its own that shares the memory
  /// (an OpenCL sub-buffer; also of a sub-buffer): for a library that reads a matrix from a
  /// buffer's start without a copy (CLBlast). `offset` must be a multiple of the device's
  /// base_address_alignment (ValidationError otherwise; see can_start_at).
  DeviceBuffer sub_buffer(size_t offset, size_t bytes) const;
  /// Whether sub_buffer accepts `offset` (in range and aligned).
  bool can_start_at(size_t offset) const noexcept;

  /// Host → device at byte `offset`. Blocking (counted) unless `blocking` is false; then `src`
  /// must stay alive until the queue has run the copy.
  void write(const void* src, size_t bytes, size_t offset = 0, bool blocking = true) const;
  /// Device → host from byte `offset` (blocking, counted as a host wait).
  void read(void* dst, size_t bytes, size_t offset = 0) const;
  /// Device → host without waiting: returns the copy's event (the caller waits for it and
  /// releases it; `dst` must stay alive until then).
  cl_event read_async(void* dst, size_t bytes, size_t offset = 0) const;
  /// Enqueues a fill of `bytes` at `offset` with a repeated `pattern` of `pattern_size` bytes.
  void fill(const void* pattern, size_t pattern_size, size_t offset, size_t bytes) const;

 private:
  void check_range(size_t bytes, size_t offset, const char* what) const;

  Runtime* rt_ = nullptr;
  cl_mem mem_ = nullptr;
  size_t bytes_ = 0;
  std::string what_;
};

}  // namespace anycl
