// Launchers for cl_kernels/conv_winograd.cl, and the GEMMs between them (one a plane).
#include "conv_winograd.hpp"

#include "anycl/blas/blas.hpp"
#include "anycl/error.hpp"
#include "anycl/nn/shape.hpp"
#include "kernel_call.hpp"

#include <algorithm>

namespace anycl {

ConvWinogradOps::ConvWinogradOps(Runtime& rt)
    : rt_(rt),
      weights_(detail::kernel(rt, "conv_winograd", "winograd_weights")),
      input_{detail::kernel(rt, "conv_winograd", "winograd_input"),
             detail::kernel(rt, "conv_winograd", "winograd_input_rows")} {
  for (size_t rows : {0, 1})
    for (Activation act : {Activation::linear, Activation::relu, Activation::tanh, Activation::sigmoid,
                           Activation::leaky_relu, Activation::elu, Activation::gelu})
      output_[rows][size_t(act)] = detail::kernel(
          rt, "conv_winograd", fmt::format("winograd_output_{}{}", rows ? "rows_" : "", to_string(act)));
}

ConvWinogradOps::Layout ConvWinogradOps::layout(Runtime* rt, const ConvGeometry& g, size_t filters,
                                                size_t batch) {
  const size_t tiles = checked_mul(batch, tiles_per_image(g), "a Winograd convolution's tiles");
  // As training asks it: C = Uᵀ·V (TN), padded so that CLBlast copies no operand (gemm_padding).
  const GemmPadding pad = rt ? gemm_padding(*rt, filters, tiles, g.channels) : GemmPadding{};
  const size_t fp = detail::round_up(filters, pad.m), tp = detail::round_up(tiles, pad.n);
  // Each plane a cache line past the last, or as far as a sub-buffer may start on the device.
  const size_t align = rt ? rt->info().base_address_alignment / sizeof(float) : 0;
  const size_t skew = std::max<size_t>(16, align);
  const auto plane = [&](size_t rows, size_t cols, const char* what) {
    return detail::round_up(checked_add(checked_mul(rows, cols, what), skew, what), skew);
  };
  return {tiles, fp, tp, plane(g.channels, tp, "Winograd's V"), plane(fp, tp, "Winograd's M")};
}

GemmShape ConvWinogradOps::gemm_shape(Runtime* rt, const ConvGeometry& g, size_t filters, size_t batch) {
  const Layout l = layout(rt, g, filters, batch);
  return {"fwd", true, false, l.fp, l.tp, g.channels, kPlanes};
}

size_t ConvWinogradOps::scratch_floats(Runtime* rt, const ConvGeometry& g, size_t filters, size_t batch) {
  const Layout l = layout(rt, g, filters, batch);
  const size_t per_plane = checked_add(
      checked_add(checked_mul(g.channels, l.fp, "Winograd"), l.v_plane, "Winograd"), l.m_plane, "Winograd");
  return checked_mul(kPlanes, per_plane, "a Winograd convolution's scratch");
}

namespace {
// `t` with room for `floats` (zeroed where it is made: V's padding columns stay zero).
Tensor& at_least(Runtime& rt, Tensor& t, size_t floats) {
  if (t.size() < floats) {
    t = Tensor(rt, {floats});
    t.fill(0.f);
  }
  return t;
}
}  // namespace

void ConvWinogradOps::forward(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y,
                              const ConvGeometry& g, Activation act, Tensor* z) {
  using detail::u32;
  const size_t batch = x.rows(), filters = bias.size(), c = g.channels;
  if (!fits(g))
    throw ValidationError(fmt::format("winograd_forward: a {}×{} kernel at stride {}: only 3×3 at stride 1",
                                      g.kernel, g.kernel, g.stride));
  if (x.cols() != c * g.height * g.width || filters == 0 || w.size() != filters * g.patch() ||
      y.rows() != batch || y.cols() != filters * g.plane())
    throw ValidationError(fmt::format(
        "winograd_forward: x {}, W {}, bias {} and y {} do not fit ({}, {}, {}) images and {} filters",
        x.shape_string(), w.shape_string(), bias.shape_string(), y.shape_string(), c, g.height, g.width,
        filters));
  if (activation_keeps_input(act) && (!z || z->shape() != y.shape()))
    throw ValidationError(
        fmt::format("winograd_forward: {} needs z shaped as y {}", to_string(act), y.shape_string()));
  if (batch == 0) return;
  const Layout l = layout(&rt_, g, filters, batch);
  const size_t tiles_h = (g.out_h + kTile - 1) / kTile, tiles_w = (g.out_w + kTile - 1) / kTile;
  Tensor& u = at_least(rt_, u_, checked_mul(kPlanes, c * l.fp, "Winograd's U"));
  Tensor& v = at_least(rt_, v_, checked_mul(kPlanes, l.v_plane, "Winograd's V"));
  Tensor& m = at_least(rt_, m_, checked_mul(kPlanes, l.m_plane, "Winograd's M"));
  u32(x.offset() + x.size(), "winograd_forward's x");
  u32(v.size(), "winograd_forward's V");
  u32(m.size(), "winograd_forward's M");
  const Tensor& kept = z ? *z : y;  // written by the gelu kernel only
  u32(y.offset() + y.size(), "a Conv2D's output size");
  u32(kept.offset() + kept.size(), "a Conv2D's output size");

  detail::set_args(weights_, w.mem(), u32(w.offset(), "offset"), u.mem(), u32(c, "channels"),
                   u32(filters, "filters"), u32(l.fp, "filters"));
  detail::launch_1d(rt_, weights_, c * l.fp);
  // The row forms on every CPU driver, not only Runtime::row_kernels' (PoCL): on Intel's runtime they
  // took 2.4 and 4.1 ms against the 3-D forms' 3.3 and 13.4 for the reference CNN's conv 2.
  const bool rows = rt_.row_kernels() || rt_.info().type == DeviceType::cpu;
  compute::kernel& in = input_[rows];
  detail::set_args(in, x.mem(), u32(x.offset(), "offset"), v.mem(), u32(batch, "batch"), u32(c, "channels"),
                   u32(g.height, "height"), u32(g.width, "width"), u32(g.pad_top, "pad"),
                   u32(g.pad_left, "pad"), u32(tiles_h, "tiles"), u32(tiles_w, "tiles"), u32(l.tp, "tiles"),
                   u32(l.v_plane, "V"));
  if (rows)
    detail::launch_1d(rt_, in, batch * c * tiles_h);
  else
    detail::launch_planes(rt_, in, tiles_w, tiles_h, batch * c);
  // One GEMM a plane, not CLBlast's strided-batched routine: its indirect kernel, where it copies no
  // operand, takes every matrix as packed back to back (it ignores the strides), and planes packed so
  // put a tile's 16 values in one cache set. The GEMM layer hands CLBlast each plane as a sub-buffer.
  DeviceBuffer mb = m.buffer();
  for (size_t p = 0; p < kPlanes; ++p)
    gemm(rt_, Trans::yes, Trans::no, l.fp, l.tp, c, 1.f, u.buffer(), p * c * l.fp, l.fp, v.buffer(),
         p * l.v_plane, l.tp, 0.f, mb, p * l.m_plane, l.tp);
  compute::kernel& out = output_[rows].at(size_t(act));
  detail::set_args(out, m.mem(), bias.mem(), u32(bias.offset(), "offset"), y.mem(), u32(y.offset(), "offset"),
                   kept.mem(), u32(kept.offset(), "offset"), u32(batch, "batch"), u32(filters, "filters"),
                   u32(l.fp, "filters"), u32(l.tp, "tiles"), u32(g.out_h, "out_h"), u32(g.out_w, "out_w"),
                   u32(tiles_h, "tiles"), u32(tiles_w, "tiles"), u32(l.m_plane, "M"));
  if (rows)
    detail::launch_1d(rt_, out, batch * filters * tiles_h);
  else
    detail::launch_planes(rt_, out, tiles_w, tiles_h, batch * filters);
}

}  // namespace anycl
