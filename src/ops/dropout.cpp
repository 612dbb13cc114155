// Launchers for cl_kernels/dropout.cl: the rate becomes an exact 24-bit threshold.
#include "dropout.hpp"

#include "anycl/error.hpp"
#include "kernel_call.hpp"

namespace anycl {
namespace {
// Elements per work-item of the kernels that make the mask (MASK_PER_ITEM in dropout.cl): 64 on a CPU
// runtime, 1 on a GPU (RuntimeImpl::lane_elementwise).
size_t mask_per_item(Runtime& rt) { return detail::RuntimeImpl::of(rt).lane_elementwise ? 1 : 64; }
compute::kernel mask_kernel(Runtime& rt, const char* name) {
  return detail::kernel_with_options(rt, "dropout", name, mask_per_item(rt) == 64 ? "" : "-DMASK_PER_ITEM=1");
}
constexpr size_t kKeptPerItem = 16;  // elements per work-item of dropout_backward_kept, which reads the mask

struct MaskArgs {
  cl_uint threshold;
  cl_float scale;
  cl_uint seed_lo, seed_hi;
};
MaskArgs mask_args(const DropoutMask& m) {
  if (!(m.rate >= 0.f && m.rate < 1.f))
    throw ValidationError(fmt::format("dropout rate must be in [0, 1), got {}", m.rate));
  return {cl_uint(double(m.rate) * 16777216.0), 1.0f / (1.0f - m.rate), cl_uint(m.seed & 0xffffffffu),
          cl_uint(m.seed >> 32)};
}
}  // namespace

DropoutOp::DropoutOp(Runtime& rt)
    : rt_(rt),
      per_item_(mask_per_item(rt)),
      forward_(mask_kernel(rt, "dropout_forward")),
      forward_keep_(mask_kernel(rt, "dropout_forward_keep")),
      forward_bias_activation_(mask_kernel(rt, "bias_activation_dropout_forward")),
      backward_(mask_kernel(rt, "dropout_backward")),
      backward_kept_(detail::kernel(rt, "dropout", "dropout_backward_kept")) {}

namespace {

void check_keep(const DeviceBuffer& keep, size_t offset, size_t n) {
  if (offset > keep.bytes() || n > keep.bytes() - offset)
    throw ValidationError(fmt::format("dropout: a mask of {} bytes at {} does not fit its {}-byte buffer", n,
                                      offset, keep.bytes()));
}

}  // namespace

void DropoutOp::forward(const Tensor& x, Tensor& y, const DropoutMask& m, DeviceBuffer* keep,
                        size_t keep_offset) {
  if (x.shape() != y.shape())
    throw ValidationError(fmt::format("dropout: x {} and y {} differ", x.shape_string(), y.shape_string()));
  const MaskArgs a = mask_args(m);
  using detail::u32;
  if (keep) {
    check_keep(*keep, keep_offset, x.size());
    detail::set_args(forward_keep_, x.mem(), u32(x.offset(), "offset"), y.mem(), u32(y.offset(), "offset"),
                     keep->mem(), u32(keep_offset, "offset"), u32(x.size(), "size"), u32(x.cols(), "cols"),
                     cl_uint(m.row_base), a.threshold, a.scale, a.seed_lo, a.seed_hi, cl_uint(m.step),
                     cl_uint(m.stream));
    detail::launch_1d(rt_, forward_keep_, x.size(), 64, per_item_);
    return;
  }
  detail::set_args(forward_, x.mem(), u32(x.offset(), "offset"), y.mem(), u32(y.offset(), "offset"),
                   u32(x.size(), "size"), u32(x.cols(), "cols"), cl_uint(m.row_base), a.threshold, a.scale,
                   a.seed_lo, a.seed_hi, cl_uint(m.step), cl_uint(m.stream));
  detail::launch_1d(rt_, forward_, x.size(), 64, per_item_);
}

void DropoutOp::forward_bias_activation(Tensor& y, const Tensor& bias, Activation act, Tensor& out,
                                        const DropoutMask& m, DeviceBuffer& keep, size_t keep_offset) {
  if (y.shape() != out.shape() || bias.size() != y.cols())
    throw ValidationError(fmt::format("bias_activation_dropout_forward: y {}, bias {}, out {} do not fit",
                                      y.shape_string(), bias.shape_string(), out.shape_string()));
  const MaskArgs a = mask_args(m);
  check_keep(keep, keep_offset, y.size());
  using detail::u32;
  u32(y.size(), "size");  // the kernel's n and the mask's counter are 32-bit
  detail::set_args(forward_bias_activation_, y.mem(), u32(y.offset(), "offset"), bias.mem(),
                   u32(bias.offset(), "offset"), u32(y.rows(), "rows"), u32(y.cols(), "cols"), cl_int(act),
                   out.mem(), u32(out.offset(), "offset"), keep.mem(), u32(keep_offset, "offset"),
                   cl_uint(m.row_base), a.threshold, a.scale, a.seed_lo, a.seed_hi, cl_uint(m.step),
                   cl_uint(m.stream));
  detail::launch_1d(rt_, forward_bias_activation_, y.size(), 64, per_item_);
}

void DropoutOp::backward_kept(Tensor& dy, const DeviceBuffer& keep, size_t keep_offset, float rate) {
  const MaskArgs a = mask_args({rate});
  check_keep(keep, keep_offset, dy.size());
  using detail::u32;
  detail::set_args(backward_kept_, dy.mem(), u32(dy.offset(), "offset"), keep.mem(),
                   u32(keep_offset, "offset"), u32(dy.size(), "size"), a.scale);
  detail::launch_1d(rt_, backward_kept_, dy.size(), 64, kKeptPerItem);
}

void DropoutOp::backward(Tensor& dy, const DropoutMask& m) {
  const MaskArgs a = mask_args(m);
  using detail::u32;
  detail::set_args(backward_, dy.mem(), u32(dy.offset(), "offset"), u32(dy.size(), "size"),
                   u32(dy.cols(), "cols"), cl_uint(m.row_base), a.threshold, a.scale, a.seed_lo, a.seed_hi,
                   cl_uint(m.step), cl_uint(m.stream));
  detail::launch_1d(rt_, backward_, dy.size(), 64, per_item_);
}

}  // namespace anycl
