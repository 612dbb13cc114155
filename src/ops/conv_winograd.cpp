// Launchers for cl_kernels/conv_winograd.cl, and the GEMMs between them (one a plane).
#include "conv_winograd.hpp"

#include "anycl/blas/blas.hpp"
#include "anycl/error.hpp"
#include "anycl/nn/shape.hpp"
#include "blas/gemm_plan.hpp"
#include "kernel_call.hpp"

#include <algorithm>
#include <numeric>
#include <utility>

namespace anycl {

namespace {
// Floats from one plane of rows × cols to the next: a cache line past its size, or as far as a
// sub-buffer may start on the device.
size_t skewed_plane(Runtime* rt, size_t rows, size_t cols, const char* what) {
  const size_t align = rt ? rt->info().base_address_alignment / sizeof(float) : 0;
  const size_t skew = std::max<size_t>(16, align);
  return detail::round_up(checked_add(checked_mul(rows, cols, what), skew, what), skew);
}
// The weight gradient's slices of blocks: about, and at least, this many blocks, a multiple of this many.
constexpr size_t kDwSliceBlocks = 1024, kDwMinSliceBlocks = 256, kDwPartMultiple = 64;
}  // namespace

ConvWinogradOps::ConvWinogradOps(Runtime& rt)
    : rt_(rt),
      weights_(detail::kernel(rt, "conv_winograd", "winograd_weights")),
      input_{detail::kernel(rt, "conv_winograd", "winograd_input"),
             detail::kernel(rt, "conv_winograd", "winograd_input_rows")},
      dw_dz_(detail::kernel(rt, "conv_winograd", "winograd_dw_dz")),
      dw_input_(detail::kernel(rt, "conv_winograd", "winograd_dw_input_rows")),
      dw_output_(detail::kernel(rt, "conv_winograd", "winograd_dw_output")) {
  for (size_t row_form : {0, 1})
    for (Activation act : {Activation::linear, Activation::relu, Activation::tanh, Activation::sigmoid,
                           Activation::leaky_relu, Activation::elu, Activation::gelu})
      output_[row_form][size_t(act)] = detail::kernel(
          rt, "conv_winograd", fmt::format("winograd_output_{}{}", row_form ? "rows_" : "", to_string(act)));
  for (Activation act : {Activation::linear, Activation::relu, Activation::tanh, Activation::sigmoid,
                         Activation::leaky_relu, Activation::elu})
    output_pooled_.at(size_t(act)) =
        detail::kernel(rt, "conv_winograd", fmt::format("winograd_output_rows_pooled_{}", to_string(act)));
}

ConvGeometry ConvWinogradOps::dx_geometry(const ConvGeometry& g, size_t filters) noexcept {
  ConvGeometry d = g;
  d.channels = filters;
  d.height = g.out_h;
  d.width = g.out_w;
  d.pad_top = 2 - std::min<size_t>(g.pad_top, 2);  // a 3×3 kernel pads at most 2
  d.pad_left = 2 - std::min<size_t>(g.pad_left, 2);
  d.out_h = g.height;
  d.out_w = g.width;
  return d;
}

ConvWinogradOps::Layout ConvWinogradOps::layout(Runtime* rt, const ConvGeometry& g, size_t filters,
                                                size_t batch) {
  const size_t tiles_h = (g.out_h + kTile - 1) / kTile, tiles_w = (g.out_w + kTile - 1) / kTile;
  const size_t tiles =
      checked_mul(batch, checked_mul(tiles_h, tiles_w, "Winograd's tiles"), "Winograd's tiles");
  // As training asks it: M = Uᵀ·V (TN), padded so that CLBlast copies no operand (gemm_padding), on the
  // tiles of the set the products run on (ConvWinogradGemmScope, run()).
  const GemmPadding pad = rt ? detail::winograd_padding(*rt, filters, tiles, g.channels) : GemmPadding{};
  const size_t fp = detail::round_up(filters, pad.m), tp = detail::round_up(tiles, pad.n);
  return {tiles_h,
          tiles_w,
          tiles,
          fp,
          tp,
          skewed_plane(rt, g.channels, tp, "Winograd's V"),
          skewed_plane(rt, fp, tp, "Winograd's M")};
}

ConvWinogradOps::DwLayout ConvWinogradOps::dw_layout(Runtime* rt, const ConvGeometry& g, size_t filters,
                                                     size_t batch) {
  DwLayout d{};
  const size_t tiles_w = (g.out_w + kTile - 1) / kTile;
  d.blocks = checked_mul(checked_mul(batch, g.out_h, "Winograd's blocks"), tiles_w, "Winograd's blocks");
  // Slices of about kDwSliceBlocks blocks (the reference CNN's conv 2: 18 of 1,024; 8 of 2,304 ran its
  // GEMMs 25 % slower), and at least four a compute unit where each is still kDwMinSliceBlocks long (on a CPU
  // each slice's product is one or two GEMM tiles: one slice would run on one core).
  const size_t units = rt ? std::max<size_t>(1, rt->info().compute_units) : 1;
  const size_t wanted = std::max<size_t>(
      {size_t(1), d.blocks / kDwSliceBlocks, std::min(4 * units, d.blocks / kDwMinSliceBlocks)});
  d.part = detail::round_up(std::max<size_t>(1, (d.blocks + wanted - 1) / wanted), kDwPartMultiple);
  d.slices = std::max<size_t>(1, (d.blocks + d.part - 1) / d.part);
  // S = Dᵀ·X (F × 3C) or Xᵀ·D (3C × F): the one CLBlast runs without copying an operand or C (asked
  // column-major on its indirect kernel, padded to whole tiles as gemm_padding says), and of those the one
  // padded less; padded to whole float8 lanes too. (The AVX2 entry's large set asked 3C × F row-major:
  // CLBlast's batched routine then allocated and copied on every call, 28 ms a step on the host.)
  const size_t columns = checked_mul(3, g.channels, "Winograd's X");
  struct Form {
    bool copies;
    size_t m, n;
  };
  const auto form = [&](size_t m, size_t n) {
    const bool copy_free = rt && detail::column_major_call(*rt, m, n, d.part);
    const GemmPadding pad = copy_free ? gemm_padding(*rt, m, n, d.part) : GemmPadding{};
    return Form{!copy_free, detail::round_up(m, std::lcm(pad.m, size_t(8))),
                detail::round_up(n, std::lcm(pad.n, size_t(8)))};
  };
  const Form first = form(filters, columns), turned = form(columns, filters);
  d.filters_first = first.copies != turned.copies ? !first.copies : first.m * first.n <= turned.m * turned.n;
  d.fp = d.filters_first ? first.m : turned.n;
  d.xp = d.filters_first ? first.n : turned.m;
  const size_t rows = checked_mul(d.slices, d.part, "Winograd's weight gradient");
  d.d_plane = skewed_plane(rt, rows, d.fp, "Winograd's D");
  d.x_plane = skewed_plane(rt, rows, d.xp, "Winograd's X");
  d.s_plane = skewed_plane(rt, d.slices, d.fp * d.xp, "Winograd's S");
  return d;
}

GemmShape ConvWinogradOps::gemm_shape(Runtime* rt, const ConvGeometry& g, size_t filters, size_t batch) {
  const Layout l = layout(rt, g, filters, batch);
  return {"fwd", true, false, l.fp, l.tp, g.channels, kPlanes};
}

GemmShape ConvWinogradOps::dx_gemm_shape(Runtime* rt, const ConvGeometry& g, size_t filters, size_t batch) {
  const Layout l = layout(rt, dx_geometry(g, filters), g.channels, batch);
  return {"dX", true, false, l.fp, l.tp, filters, kPlanes};
}

GemmShape ConvWinogradOps::dw_gemm_shape(Runtime* rt, const ConvGeometry& g, size_t filters, size_t batch) {
  const DwLayout d = dw_layout(rt, g, filters, batch);
  return {"dW", true, false, d.m(), d.n(), d.part, kDwPlanes * d.slices};
}

size_t ConvWinogradOps::scratch_floats(Runtime* rt, const ConvGeometry& g, size_t filters, size_t batch) {
  const Layout f = layout(rt, g, filters, batch), d = layout(rt, dx_geometry(g, filters), g.channels, batch);
  const DwLayout w = dw_layout(rt, g, filters, batch);
  const size_t u = std::max(g.channels * f.fp, filters * d.fp), v = std::max(f.v_plane, d.v_plane),
               m = std::max(f.m_plane, d.m_plane);
  const size_t planes =
      checked_mul(kPlanes, checked_add(checked_add(u, v, "Winograd"), m, "Winograd"), "Winograd");
  const size_t dw = checked_mul(
      kDwPlanes, checked_add(checked_add(w.d_plane, w.x_plane, "Winograd"), w.s_plane, "Winograd"),
      "Winograd");
  return checked_add(planes, dw, "a Winograd convolution's scratch");
}

namespace {
// `t` with room for `floats` (zeroed where it is made). Padding rows and columns of V and M, whichever
// pass wrote them last, are never read into a result.
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
  run({x, c * g.height * g.width, g.height * g.width}, {w, g.patch(), 9}, false, bias, y, g, filters, batch,
      act, z);
}

void ConvWinogradOps::forward_pooled(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& pooled,
                                     Tensor& arg, const ConvGeometry& g, Activation act) {
  const size_t batch = x.rows(), filters = bias.size(), c = g.channels;
  if (!pools_output() || activation_keeps_input(act))
    throw ValidationError(fmt::format("winograd_forward_pooled: not for {} on this driver", to_string(act)));
  if (!fits(g) || x.cols() != c * g.height * g.width || filters == 0 || w.size() != filters * g.patch() ||
      g.out_h < 2 || g.out_w < 2 || pooled.rows() != batch ||
      pooled.cols() != filters * (g.out_h / 2) * (g.out_w / 2) || arg.dtype() != DType::i32 ||
      arg.size() < pooled.size() || pooled.offset() != 0 || arg.offset() != 0)
    throw ValidationError(fmt::format(
        "winograd_forward_pooled: x {}, W {}, bias {}, pooled {} and arg {} do not fit ({}, {}, {}) "
        "images, {} filters of {}×{} at stride {} and a 2×2 pool",
        x.shape_string(), w.shape_string(), bias.shape_string(), pooled.shape_string(), arg.shape_string(), c,
        g.height, g.width, filters, g.kernel, g.kernel, g.stride));
  if (batch == 0) return;
  const PoolTarget pool{pooled, arg};
  run({x, c * g.height * g.width, g.height * g.width}, {w, g.patch(), 9}, false, bias, pooled, g, filters,
      batch, act, nullptr, &pool);
}

void ConvWinogradOps::backward_dx(const Tensor& dz, const Tensor& w, Tensor& dx, const ConvGeometry& g,
                                  size_t batch) {
  const size_t filters = w.rows(), c = g.channels, plane = g.plane();
  if (!fits(g))
    throw ValidationError(
        fmt::format("winograd_backward_dx: a {}×{} kernel at stride {}: only 3×3 at stride 1", g.kernel,
                    g.kernel, g.stride));
  if (filters == 0 || w.size() != filters * g.patch() || dz.size() < filters * batch * plane ||
      dx.rows() != batch || dx.cols() != c * g.height * g.width)
    throw ValidationError(fmt::format(
        "winograd_backward_dx: dz {}, W {} and dx {} do not fit {} images of ({}, {}, {}) and {} filters",
        dz.shape_string(), w.shape_string(), dx.shape_string(), batch, c, g.height, g.width, filters));
  if (batch == 0) return;
  Tensor& zeros = at_least(rt_, zeros_, c);
  // Filter c of the gradient's convolution over channel f is W[f][c] turned; dz's image (b, f) lies
  // at f·batch·OH·OW + b·OH·OW.
  run({dz, plane, checked_mul(batch, plane, "dz")}, {w, 9, g.patch()}, true, zeros.rows(0, c), dx,
      dx_geometry(g, filters), c, batch, Activation::linear, nullptr);
}

void ConvWinogradOps::backward_dw(const Tensor& dz, const Tensor& x, Tensor& dw, const ConvGeometry& g,
                                  size_t batch) {
  using detail::u32;
  const size_t filters = dw.rows(), c = g.channels, plane = g.plane();
  if (!fits(g))
    throw ValidationError(
        fmt::format("winograd_backward_dw: a {}×{} kernel at stride {}: only 3×3 at stride 1", g.kernel,
                    g.kernel, g.stride));
  if (filters == 0 || dw.size() != filters * g.patch() || dz.size() < filters * batch * plane ||
      x.rows() != batch || x.cols() != c * g.height * g.width)
    throw ValidationError(fmt::format(
        "winograd_backward_dw: dz {}, x {} and dW {} do not fit {} images of ({}, {}, {}) and {} filters",
        dz.shape_string(), x.shape_string(), dw.shape_string(), batch, c, g.height, g.width, filters));
  if (batch == 0) {
    dw.fill(0.f);
    return;
  }
  const DwLayout l = dw_layout(&rt_, g, filters, batch);
  const size_t rows = l.slices * l.part, tiles_w = (g.out_w + kTile - 1) / kTile;
  Tensor& d = at_least(rt_, dw_d_, checked_mul(kDwPlanes, l.d_plane, "Winograd's D"));
  Tensor& xs = at_least(rt_, dw_x_, checked_mul(kDwPlanes, l.x_plane, "Winograd's X"));
  Tensor& s = at_least(rt_, dw_s_, checked_mul(kDwPlanes, l.s_plane, "Winograd's S"));
  u32(dz.offset() + dz.size(), "dz");
  u32(x.offset() + x.size(), "a Winograd convolution's input");
  u32(d.size(), "Winograd's D");
  u32(xs.size(), "Winograd's X");
  u32(s.size(), "Winograd's S");
  u32(dw.offset() + dw.size(), "dW");

  detail::set_args(dw_dz_, dz.mem(), u32(dz.offset(), "offset"), d.mem(), u32(batch, "batch"),
                   u32(filters, "filters"), u32(l.fp, "filters"), u32(g.out_h, "out_h"),
                   u32(g.out_w, "out_w"), u32(tiles_w, "tiles"), u32(rows, "blocks"), u32(l.d_plane, "D"),
                   u32(batch * plane, "a stride"));
  detail::launch_1d(rt_, dw_dz_, rows * (l.fp / 8));
  const size_t blocks = batch * g.out_h * tiles_w;
  detail::set_args(dw_input_, x.mem(), u32(x.offset(), "offset"), xs.mem(), u32(batch, "batch"),
                   u32(c, "channels"), u32(l.xp, "columns"), u32(g.height, "height"), u32(g.width, "width"),
                   u32(g.pad_top, "pad"), u32(g.pad_left, "pad"), u32(g.out_h, "out_h"),
                   u32(tiles_w, "tiles"), u32(rows, "blocks"), u32(l.x_plane, "X"));
  const size_t lines = checked_mul(batch * (g.out_h + 2), (c + 7) / 8, "Winograd's X");
  detail::launch_1d(rt_, dw_input_, checked_add(lines, (rows - blocks) * (l.xp / 8), "Winograd's X"));
  // Per plane one strided-batched GEMM over the slices (packed within the plane: the routine's indirect
  // kernel takes them so), the planes a cache line apart, handed to CLBlast as sub-buffers.
  const Tensor& a = l.filters_first ? d : xs;
  const Tensor& b = l.filters_first ? xs : d;
  const size_t a_plane = l.filters_first ? l.d_plane : l.x_plane;
  const size_t b_plane = l.filters_first ? l.x_plane : l.d_plane;
  const size_t m = l.m(), n = l.n();
  DeviceBuffer sb = s.buffer();
  if (detail::conv_dw_batched(rt_, l.slices, m, n, l.part)) {
    for (size_t p = 0; p < kDwPlanes; ++p)
      gemm_strided_batched(rt_, Trans::yes, Trans::no, m, n, l.part, 1.f, a.buffer(), p * a_plane, m,
                           l.part * m, b.buffer(), p * b_plane, n, l.part * n, 0.f, sb, p * l.s_plane, n,
                           m * n, l.slices);
  } else {  // one GEMM a slice where the tuning entry says so (BATCHED_DW=0: Intel's runtime)
    for (size_t p = 0; p < kDwPlanes; ++p)
      for (size_t q = 0; q < l.slices; ++q)
        gemm(rt_, Trans::yes, Trans::no, m, n, l.part, 1.f, a.buffer(), p * a_plane + q * l.part * m, m,
             b.buffer(), p * b_plane + q * l.part * n, n, 0.f, sb, p * l.s_plane + q * m * n, n);
  }
  detail::set_args(dw_output_, s.mem(), dw.mem(), u32(dw.offset(), "offset"), u32(filters, "filters"),
                   u32(c, "channels"), u32(l.slices, "slices"), u32(m * n, "a slice"), u32(l.s_plane, "S"),
                   u32(l.filters_first ? l.xp : 1, "a stride"), u32(l.filters_first ? 1 : l.fp, "a stride"));
  detail::launch_1d(rt_, dw_output_, filters * 3 * c);
}

void ConvWinogradOps::run(const Operand& x, const Operand& w, bool flip, const Tensor& bias, Tensor& y,
                          const ConvGeometry& g, size_t filters, size_t batch, Activation act, Tensor* z,
                          const PoolTarget* pool) {
  using detail::u32;
  const size_t c = g.channels;
  // The products on the tuning's Winograd set where it pads them less (none elsewhere); the layout too.
  const detail::ConvWinogradGemmScope gemm_set(rt_, filters, layout(nullptr, g, filters, batch).tiles, c);
  const Layout l = layout(&rt_, g, filters, batch);
  Tensor& u = at_least(rt_, u_, checked_mul(kPlanes, c * l.fp, "Winograd's U"));
  Tensor& v = at_least(rt_, v_, checked_mul(kPlanes, l.v_plane, "Winograd's V"));
  Tensor& m = at_least(rt_, m_, checked_mul(kPlanes, l.m_plane, "Winograd's M"));
  u32(x.t.offset() + x.t.size(), "a Winograd convolution's input");
  u32(v.size(), "Winograd's V");
  u32(m.size(), "Winograd's M");
  const Tensor& kept = z ? *z : y;  // written by the gelu kernel only
  u32(y.offset() + y.size(), "a Conv2D's output size");
  u32(kept.offset() + kept.size(), "a Conv2D's output size");

  detail::set_args(weights_, w.t.mem(), u32(w.t.offset(), "offset"), u.mem(), u32(c, "channels"),
                   u32(filters, "filters"), u32(l.fp, "filters"), u32(w.batch_or_filter_stride, "a stride"),
                   u32(w.channel_stride, "a stride"), u32(flip ? 1 : 0, "flip"));
  detail::launch_1d(rt_, weights_, c * l.fp);
  compute::kernel& in = input_[rows()];
  detail::set_args(in, x.t.mem(), u32(x.t.offset(), "offset"), v.mem(), u32(batch, "batch"),
                   u32(c, "channels"), u32(g.height, "height"), u32(g.width, "width"), u32(g.pad_top, "pad"),
                   u32(g.pad_left, "pad"), u32(l.tiles_h, "tiles"), u32(l.tiles_w, "tiles"),
                   u32(l.tp, "tiles"), u32(l.v_plane, "V"), u32(x.batch_or_filter_stride, "a stride"),
                   u32(x.channel_stride, "a stride"), u32(x.t.offset() + x.t.size(), "the input's end"));
  if (rows())
    detail::launch_1d(rt_, in, batch * c * l.tiles_h);
  else
    detail::launch_planes(rt_, in, l.tiles_w, l.tiles_h, batch * c);
  // One GEMM a plane, not CLBlast's strided-batched routine: its indirect kernel, where it copies no
  // operand, takes every matrix as packed back to back (it ignores the strides), and planes packed so
  // put a tile's 36 values in one cache set. The GEMM layer hands CLBlast each plane as a sub-buffer.
  DeviceBuffer mb = m.buffer();
  for (size_t p = 0; p < kPlanes; ++p)
    gemm(rt_, Trans::yes, Trans::no, l.fp, l.tp, c, 1.f, u.buffer(), p * c * l.fp, l.fp, v.buffer(),
         p * l.v_plane, l.tp, 0.f, mb, p * l.m_plane, l.tp);
  if (pool) {  // y's 2×2 windows pooled in registers: only their maxima and argmax written
    compute::kernel& out = output_pooled_.at(size_t(act));
    detail::set_args(out, m.mem(), bias.mem(), u32(bias.offset(), "offset"), pool->pooled.mem(),
                     pool->arg.mem(), u32(batch, "batch"), u32(filters, "filters"), u32(l.tp, "tiles"),
                     u32(g.out_h, "out_h"), u32(g.out_w, "out_w"), u32(l.tiles_h, "tiles"),
                     u32(l.tiles_w, "tiles"), u32(l.m_plane, "M"));
    detail::launch_1d(rt_, out, batch * filters * l.tiles_h);
    return;
  }
  compute::kernel& out = output_[rows()].at(size_t(act));
  detail::set_args(out, m.mem(), bias.mem(), u32(bias.offset(), "offset"), y.mem(), u32(y.offset(), "offset"),
                   kept.mem(), u32(kept.offset(), "offset"), u32(batch, "batch"), u32(filters, "filters"),
                   u32(l.fp, "filters"), u32(l.tp, "tiles"), u32(g.out_h, "out_h"), u32(g.out_w, "out_w"),
                   u32(l.tiles_h, "tiles"), u32(l.tiles_w, "tiles"), u32(l.m_plane, "M"));
  if (rows())
    detail::launch_1d(rt_, out, batch * filters * l.tiles_h);
  else
    detail::launch_planes(rt_, out, l.tiles_w, l.tiles_h, batch * filters);
}

}  // namespace anycl
