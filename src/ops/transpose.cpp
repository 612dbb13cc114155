// Launcher for cl_kernels/transpose.cl.
#include "transpose.hpp"

#include <cstdint>

#include "kernel_call.hpp"

namespace anycl {

namespace {

constexpr size_t kBlock = 8;  // transpose.cl's BLOCK: rows and columns per work-item

}  // namespace

BlockTranspose::BlockTranspose(Runtime& rt)
    : rt_(rt),
      kernel_(detail::kernel(rt, "transpose", "transpose_blocks")),
      sum_kernel_(detail::kernel(rt, "transpose", "transpose_sum_slices")) {}

void BlockTranspose::run(const Tensor& a, Tensor& out) {
  if (a.shape().size() != 2 || out.rows() != a.cols() || out.cols() != a.rows())
    throw ValidationError(
        fmt::format("transpose: a{} does not fit out{}", a.shape_string(), out.shape_string()));
  DeviceBuffer b = out.buffer();
  run(a.rows(), a.cols(), a.buffer(), a.offset(), a.cols(), b, out.offset(), out.cols());
}

void BlockTranspose::run(size_t rows, size_t cols, const DeviceBuffer& a, size_t a_offset, size_t lda,
                         DeviceBuffer& b, size_t b_offset, size_t ldb) {
  using detail::u32;
  if (rows == 0 || cols == 0) return;
  if (lda < cols || ldb < rows)
    throw ValidationError(
        fmt::format("transpose: leading dimensions {} and {} are below {}x{}", lda, ldb, rows, cols));
  // Each size fits 32 bits (u32 below), so these 64-bit sums cannot wrap.
  const auto end = [](size_t offset, size_t count, size_t ld, size_t width) {
    return (uint64_t(offset) + uint64_t(count - 1) * ld + width) * sizeof(float);
  };
  const cl_uint args[] = {u32(a_offset, "offset"), u32(lda, "leading dimension"),
                          u32(rows, "rows"),       u32(cols, "columns"),
                          u32(b_offset, "offset"), u32(ldb, "leading dimension")};
  if (end(a_offset, rows, lda, cols) > a.bytes() || end(b_offset, cols, ldb, rows) > b.bytes())
    throw ValidationError(fmt::format("transpose: a {}x{} matrix does not fit its buffers", rows, cols));
  ++rt_.counters().transposes;
  detail::set_args(kernel_, a.mem(), args[0], args[1], args[2], args[3], b.mem(), args[4], args[5]);
  detail::launch_2d(rt_, kernel_, cols, (rows + kBlock - 1) / kBlock, kBlock, /*local_x=*/16);
}

void BlockTranspose::sum_slices(const Tensor& parts, size_t slices, size_t stride, size_t ld, size_t rows,
                                Tensor& out) {
  using detail::u32;
  const size_t cols = out.rows();
  if (slices == 0 || out.shape().size() != 2 || out.cols() != rows || ld < cols || stride < rows * ld ||
      parts.offset() != 0 || parts.size() < (slices - 1) * stride + rows * ld)
    throw ValidationError(
        fmt::format("transpose_sum_slices: {} slices of {} (stride {}, rows of {}) do not fit {}", slices,
                    parts.shape_string(), stride, ld, out.shape_string()));
  if (rows == 0 || cols == 0) return;
  u32(parts.size(), "transpose_sum_slices' input size");
  u32(out.offset() + out.size(), "transpose_sum_slices' output size");
  detail::set_args(sum_kernel_, parts.mem(), u32(slices, "slices"), u32(stride, "slice stride"),
                   u32(ld, "ld"), u32(rows, "rows"), u32(cols, "columns"), out.mem(),
                   u32(out.offset(), "offset"));
  detail::launch_2d(rt_, sum_kernel_, rows, cols);
}

}  // namespace anycl
