// Launchers for cl_kernels/conv.cl.
#include "anycl/ops/conv.hpp"

#include "anycl/error.hpp"
#include "kernel_call.hpp"

namespace anycl {

ConvOps::ConvOps(Runtime& rt)
    : rt_(rt),
      im2col_(rt.kernel("conv", "im2col_batched")),
      col2im_(rt.kernel("conv", "col2im_batched")),
      sum_(rt.kernel("conv", "sum_over_batch")) {}

namespace {
void check_offset_zero(const Tensor& t, const char* what) {
  if (t.offset() != 0)
    throw ValidationError(
        fmt::format("{} must start its buffer (offset {}), a view was given", what, t.offset()));
}
}  // namespace

void ConvOps::im2col(const Tensor& x, Tensor& col, const ConvGeometry& g) {
  using detail::u32;
  const size_t batch = x.rows();
  if (x.cols() != g.channels * g.height * g.width || col.size() < batch * g.patch() * g.plane())
    throw ValidationError(fmt::format("im2col: x {} or col {} does not fit ({}, {}, {}) with kernel {}",
                                      x.shape_string(), col.shape_string(), g.channels, g.height, g.width,
                                      g.kernel));
  check_offset_zero(col, "im2col's column buffer");
  detail::set_args(im2col_, x.mem(), u32(x.offset(), "offset"), col.mem(), u32(batch, "batch"),
                   u32(g.channels, "channels"), u32(g.height, "height"), u32(g.width, "width"),
                   u32(g.kernel, "kernel"), u32(g.kernel, "kernel"), u32(g.stride, "stride"),
                   u32(g.pad_top, "pad"), u32(g.pad_left, "pad"), u32(g.out_h, "out_h"),
                   u32(g.out_w, "out_w"));
  detail::launch_1d(rt_, im2col_, batch * g.patch() * g.plane());
}

void ConvOps::col2im(const Tensor& dcol, Tensor& dx, const ConvGeometry& g) {
  using detail::u32;
  const size_t batch = dx.rows();
  if (dx.cols() != g.channels * g.height * g.width || dcol.size() < batch * g.patch() * g.plane())
    throw ValidationError(fmt::format("col2im: dcol {} or dx {} does not fit ({}, {}, {}) with kernel {}",
                                      dcol.shape_string(), dx.shape_string(), g.channels, g.height, g.width,
                                      g.kernel));
  check_offset_zero(dcol, "col2im's column buffer");
  check_offset_zero(dx, "col2im's output");
  detail::set_args(col2im_, dcol.mem(), dx.mem(), u32(batch, "batch"), u32(g.channels, "channels"),
                   u32(g.height, "height"), u32(g.width, "width"), u32(g.kernel, "kernel"),
                   u32(g.kernel, "kernel"), u32(g.stride, "stride"), u32(g.pad_top, "pad"),
                   u32(g.pad_left, "pad"), u32(g.out_h, "out_h"), u32(g.out_w, "out_w"));
  detail::launch_1d(rt_, col2im_, dx.size());
}

void ConvOps::sum_over_batch(const Tensor& parts, size_t batch, Tensor& out) {
  using detail::u32;
  if (parts.size() < batch * out.size())
    throw ValidationError(fmt::format("sum_over_batch: parts {} hold fewer than {} × {}",
                                      parts.shape_string(), batch, out.size()));
  check_offset_zero(parts, "sum_over_batch's parts");
  detail::set_args(sum_, parts.mem(), out.mem(), u32(out.offset(), "offset"), u32(batch, "batch"),
                   u32(out.size(), "n"));
  detail::launch_1d(rt_, sum_, out.size());
}

}  // namespace anycl
