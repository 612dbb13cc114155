// Launchers for cl_kernels/conv_direct.cl.
#include "conv_direct.hpp"

#include "anycl/error.hpp"
#include "kernel_call.hpp"

namespace anycl {

ConvDirectOps::ConvDirectOps(Runtime& rt)
    : rt_(rt),
      // nine sums a lane in local memory: a block of 3×3 weights (conv_direct.cl's DW_SUMS)
      weight_grad_(detail::single_group_kernel(rt, "conv_direct", "conv_direct_weight_grad", 9, lanes_)) {
  for (size_t rows : {0, 1})
    for (Activation act : {Activation::linear, Activation::relu, Activation::tanh, Activation::sigmoid,
                           Activation::leaky_relu, Activation::elu, Activation::gelu})
      forward_[rows][size_t(act)] = detail::kernel(
          rt, "conv_direct", fmt::format("conv_direct_forward_{}{}", rows ? "rows_" : "", to_string(act)));
}

namespace {
void check_image(const char* what, const Tensor& x, const ConvGeometry& g) {
  if (x.cols() != g.channels * g.height * g.width)
    throw ValidationError(fmt::format("{}: x {} does not fit ({}, {}, {})", what, x.shape_string(),
                                      g.channels, g.height, g.width));
  detail::u32(x.offset() + x.size(), what);
}
}  // namespace

void ConvDirectOps::forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y,
                            const ConvGeometry& g, Activation act, Tensor* z) {
  using detail::u32;
  check_image("conv_direct_forward", x, g);
  const size_t batch = x.rows(), filters = bias.size();
  if (filters == 0 || w.size() != filters * g.patch() || y.rows() != batch || y.cols() != filters * g.plane())
    throw ValidationError(
        fmt::format("conv_direct_forward: W {}, bias {} and y {} do not fit {} filters of {} "
                    "over a batch of {}",
                    w.shape_string(), bias.shape_string(), y.shape_string(), filters, g.patch(), batch));
  if (activation_keeps_input(act) && (!z || z->shape() != y.shape()))
    throw ValidationError(
        fmt::format("conv_direct_forward: {} needs z shaped as y {}", to_string(act), y.shape_string()));
  const Tensor& kept = z ? *z : y;  // written by the gelu kernels only
  u32(y.offset() + y.size(), "a Conv2D's output size");
  u32(kept.offset() + kept.size(), "a Conv2D's output size");
  compute::kernel& k = forward_[rows()].at(size_t(act));
  detail::set_args(k, x.mem(), u32(x.offset(), "offset"), w.mem(), u32(w.offset(), "offset"), bias.mem(),
                   u32(bias.offset(), "offset"), y.mem(), u32(y.offset(), "offset"), kept.mem(),
                   u32(kept.offset(), "offset"), u32(batch, "batch"), u32(g.channels, "channels"),
                   u32(g.height, "height"), u32(g.width, "width"), u32(g.kernel, "kernel"),
                   u32(g.kernel, "kernel"), u32(g.stride, "stride"), u32(g.pad_top, "pad"),
                   u32(g.pad_left, "pad"), u32(g.out_h, "out_h"), u32(g.out_w, "out_w"),
                   u32(filters, "filters"));
  if (rows())
    detail::launch_1d(rt_, k, batch * filters * g.out_h);  // one work-item per output row
  else
    detail::launch_planes(rt_, k, g.out_w, g.out_h, batch * filters);
}

void ConvDirectOps::weight_grad(const Tensor& dz, const Tensor& x, Tensor& dw, Tensor& db,
                                const ConvGeometry& g) {
  using detail::u32;
  check_image("conv_direct_weight_grad", x, g);
  const size_t batch = x.rows(), filters = db.size();
  if (filters == 0 || dw.size() != filters * g.patch() || dz.size() < filters * batch * g.plane() ||
      dz.offset() != 0)
    throw ValidationError(
        fmt::format("conv_direct_weight_grad: dz {} (from its buffer's start), dW {} and db "
                    "{} do not fit {} filters of {} over a batch of {}",
                    dz.shape_string(), dw.shape_string(), db.shape_string(), filters, g.patch(), batch));
  u32(dz.size(), "conv_direct_weight_grad's dz");
  u32(dw.offset() + dw.size(), "conv_direct_weight_grad's dW");
  u32(db.offset() + db.size(), "conv_direct_weight_grad's db");
  detail::set_args(weight_grad_, dz.mem(), x.mem(), u32(x.offset(), "offset"), dw.mem(),
                   u32(dw.offset(), "offset"), db.mem(), u32(db.offset(), "offset"), u32(batch, "batch"),
                   u32(g.channels, "channels"), u32(g.height, "height"), u32(g.width, "width"),
                   u32(g.kernel, "kernel"), u32(g.kernel, "kernel"), u32(g.stride, "stride"),
                   u32(g.pad_top, "pad"), u32(g.pad_left, "pad"), u32(g.out_h, "out_h"),
                   u32(g.out_w, "out_w"));
  // One work-group per block of up to 3×3 weights of a channel and one per bias: (C·⌈K/3⌉² + 1) × F
  // groups (x over the block, y over the filter).
  const size_t blocks = g.channels * ((g.kernel + 2) / 3) * ((g.kernel + 2) / 3);
  const size_t global[2] = {(blocks + 1) * lanes_, filters}, local[2] = {lanes_, 1};
  detail::enqueue_range(rt_, weight_grad_, 2, global, local,
                        [&] { return fmt::format("conv_direct_weight_grad {}x{}", filters, blocks + 1); });
}

}  // namespace anycl
