// Launchers for cl_kernels/conv.cl.
#include "conv.hpp"

#include "anycl/error.hpp"
#include "kernel_call.hpp"

namespace anycl {

ConvOps::ConvOps(Runtime& rt)
    : rt_(rt),
      im2col_(detail::kernel(rt, "conv", "im2col_batched")),
      im2col_rows_(detail::kernel(rt, "conv", "im2col_rows")),
      channels_last_(detail::kernel(rt, "conv", "to_channels_last")),
      im2row_(detail::kernel(rt, "conv", "im2row_taps")),
      im2row_rows_(detail::kernel(rt, "conv", "im2row_taps_rows")),
      col2im_(detail::kernel(rt, "conv", "col2im_batched")),
      col2im_rows_(detail::kernel(rt, "conv", "col2im_rows")),
      bias_backward_(detail::single_group_kernel(rt, "conv", "conv_bias_backward", 1, lanes_)),
      dz_rows_(detail::kernel(rt, "conv", "conv_dz_rows")),
      sum_slices_(detail::kernel(rt, "conv", "conv_sum_slices")),
      fill_column_(detail::kernel(rt, "conv", "conv_fill_column")),
      bias_from_rows_(detail::kernel(rt, "conv", "conv_bias_from_rows")) {
  // conv.cl's output-stage kernels: [0] over a 2-D range; [1] the forward's over a 3-D one (PoCL's CPU
  // driver), the backward's a work-item a row (every CPU driver: backward_rows).
  for (size_t planes : {0, 1})
    for (Activation act : {Activation::linear, Activation::relu, Activation::tanh, Activation::sigmoid,
                           Activation::leaky_relu, Activation::elu, Activation::gelu}) {
      const char* range = planes ? "" : "2d_";
      output_forward_[planes][size_t(act)] =
          detail::kernel(rt, "conv", fmt::format("conv_output_forward_{}{}", range, to_string(act)));
      output_backward_[planes][size_t(act)] = detail::kernel(
          rt, "conv", fmt::format("conv_output_backward_{}{}", planes ? "rows_" : range, to_string(act)));
    }
  for (Activation act : {Activation::linear, Activation::relu, Activation::tanh, Activation::sigmoid,
                         Activation::leaky_relu, Activation::elu})
    output_backward_pooled_.at(size_t(act)) =
        detail::kernel(rt, "conv_pool", fmt::format("conv_output_backward_pooled_{}", to_string(act)));
}

namespace {
void check_offset_zero(const Tensor& t, const char* what) {
  if (t.offset() != 0)
    throw ValidationError(
        fmt::format("{} must start its buffer (offset {}), a view was given", what, t.offset()));
}

// A channel-major (F, batch·plane) buffer `cf` and an NCHW (batch, F·plane) tensor `y` agree.
void check_output_stage(const char* what, const Tensor& cf, const Tensor& y, const Tensor& bias,
                        const ConvGeometry& g) {
  const size_t filters = bias.size();
  if (filters == 0 || y.cols() != filters * g.plane() || cf.size() < y.size())
    throw ValidationError(
        fmt::format("{}: channel-major {}, output {} and bias {} do not fit {} filters × {}", what,
                    cf.shape_string(), y.shape_string(), bias.shape_string(), filters, g.plane()));
  check_offset_zero(cf, what);
  detail::u32(y.size(), "a Conv2D's output size");
}

// Rows per work-item of conv_dz_rows (DZ_ROWS_RUN in conv.cl).
constexpr size_t kRowRun = 8;

// Checks that x:(batch, C·H·W) fits the geometry and `out` holds batch·OH·OW rows of `row` floats.
void check_patches(const char* what, const Tensor& x, const Tensor& out, const ConvGeometry& g, size_t row) {
  if (x.cols() != g.channels * g.height * g.width || row < g.patch() ||
      out.size() < x.rows() * row * g.plane())
    throw ValidationError(fmt::format("{}: x {} or its output {} does not fit ({}, {}, {}) with kernel {}",
                                      what, x.shape_string(), out.shape_string(), g.channels, g.height,
                                      g.width, g.kernel));
  check_offset_zero(out, what);
  detail::u32(x.rows() * row * g.plane(), what);
}
}  // namespace

void ConvOps::im2col(const Tensor& x, Tensor& col, const ConvGeometry& g) {
  using detail::u32;
  check_patches("im2col", x, col, g, g.patch());
  compute::kernel& k = rt_.row_kernels() ? im2col_rows_ : im2col_;
  const size_t batch = x.rows();
  detail::set_args(k, x.mem(), u32(x.offset(), "offset"), col.mem(), u32(batch, "batch"),
                   u32(g.channels, "channels"), u32(g.height, "height"), u32(g.width, "width"),
                   u32(g.kernel, "kernel"), u32(g.kernel, "kernel"), u32(g.stride, "stride"),
                   u32(g.pad_top, "pad"), u32(g.pad_left, "pad"), u32(g.out_h, "out_h"),
                   u32(g.out_w, "out_w"));
  if (rt_.row_kernels())
    detail::launch_1d(rt_, k, g.patch() * batch);  // one work-item per row (k, b) of col
  else
    detail::launch_planes(rt_, k, g.out_w, g.out_h, g.patch() * batch);
}

void ConvOps::im2row(const Tensor& x, Tensor& xt, Tensor& colt, const ConvGeometry& g, size_t ld) {
  using detail::u32;
  check_patches("im2row", x, colt, g, ld);
  const size_t batch = x.rows(), pixels = g.height * g.width;
  if (xt.size() < x.size()) throw ValidationError("im2row: the channels-last scratch is smaller than x");
  check_offset_zero(xt, "im2row's channels-last scratch");
  detail::set_args(channels_last_, x.mem(), u32(x.offset(), "offset"), xt.mem(), u32(batch, "batch"),
                   u32(g.channels, "channels"), u32(pixels, "pixels"));
  detail::launch_row_blocks(rt_, channels_last_, pixels, batch * g.channels);
  compute::kernel& k = rt_.row_kernels() ? im2row_rows_ : im2row_;
  detail::set_args(k, xt.mem(), colt.mem(), u32(batch, "batch"), u32(g.channels, "channels"),
                   u32(g.height, "height"), u32(g.width, "width"), u32(g.kernel, "kernel"),
                   u32(g.kernel, "kernel"), u32(g.stride, "stride"), u32(g.pad_top, "pad"),
                   u32(g.pad_left, "pad"), u32(g.out_h, "out_h"), u32(g.out_w, "out_w"),
                   u32(ld, "row length"));
  if (rt_.row_kernels())
    detail::launch_1d(rt_, k, batch * g.out_h * g.kernel);  // one work-item per output row and tap row
  else
    detail::launch_planes(rt_, k, g.kernel * g.channels, batch * g.out_h, g.kernel);
}

void ConvOps::dz_rows(const Tensor& dcf, Tensor& rows, size_t count, size_t filters, size_t ld) {
  using detail::u32;
  if (ld < filters || dcf.size() < filters * count || rows.size() < count * ld)
    throw ValidationError(fmt::format("conv_dz_rows: dz {} or its rows {} does not fit {} × {} in rows of {}",
                                      dcf.shape_string(), rows.shape_string(), filters, count, ld));
  check_offset_zero(dcf, "conv_dz_rows' input");
  check_offset_zero(rows, "conv_dz_rows' output");
  u32(count * ld, "conv_dz_rows' size");
  detail::set_args(dz_rows_, dcf.mem(), rows.mem(), u32(count, "count"), u32(filters, "filters"),
                   u32(ld, "ld"));
  detail::launch_row_blocks(rt_, dz_rows_, ld, (count + kRowRun - 1) / kRowRun);
}

void ConvOps::sum_slices(const Tensor& parts, size_t slices, size_t slice_stride, size_t ld, Tensor& dw,
                         size_t channels, Tensor* db) {
  using detail::u32;
  const size_t filters = dw.rows(), cols = dw.cols();
  if (slices == 0 || ld < cols + (db ? 1 : 0) || slice_stride < filters * ld || channels == 0 ||
      cols % channels != 0 || (db && db->size() != filters) ||
      parts.size() < (slices - 1) * slice_stride + filters * ld)
    throw ValidationError(
        fmt::format("conv_sum_slices: {} slices of {} (stride {}, rows of {}) do not fit dW {}", slices,
                    parts.shape_string(), slice_stride, ld, dw.shape_string()));
  check_offset_zero(parts, "conv_sum_slices' input");
  u32(parts.size(), "conv_sum_slices' input size");
  detail::set_args(sum_slices_, parts.mem(), u32(slices, "slices"), u32(slice_stride, "slice stride"),
                   u32(ld, "ld"), dw.mem(), u32(dw.offset(), "offset"), u32(filters, "filters"),
                   u32(cols, "cols"), u32(channels, "channels"), (db ? *db : dw).mem(),
                   u32((db ? *db : dw).offset(), "offset"), cl_uint(db ? 1 : 0));
  detail::launch_row_blocks(rt_, sum_slices_, (cols + 3) / 4, filters);  // four columns a work-item
}

void ConvOps::fill_column(Tensor& t, size_t rows, size_t ld, size_t col, float value) {
  using detail::u32;
  if (col >= ld || t.size() < rows * ld)
    throw ValidationError(fmt::format("conv_fill_column: column {} of {} rows of {} does not fit {}", col,
                                      rows, ld, t.shape_string()));
  check_offset_zero(t, "conv_fill_column's tensor");
  u32(rows * ld, "conv_fill_column's size");
  detail::set_args(fill_column_, t.mem(), u32(rows, "rows"), u32(ld, "ld"), u32(col, "column"), value);
  detail::launch_1d(rt_, fill_column_, rows);
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
  detail::u32(batch * g.patch() * g.plane(), "col2im's column matrix size");
  compute::kernel& k = rt_.row_kernels() ? col2im_rows_ : col2im_;
  detail::set_args(k, dcol.mem(), dx.mem(), u32(batch, "batch"), u32(g.channels, "channels"),
                   u32(g.height, "height"), u32(g.width, "width"), u32(g.kernel, "kernel"),
                   u32(g.kernel, "kernel"), u32(g.stride, "stride"), u32(g.pad_top, "pad"),
                   u32(g.pad_left, "pad"), u32(g.out_h, "out_h"), u32(g.out_w, "out_w"));
  if (rt_.row_kernels())
    detail::launch_1d(rt_, k, batch * g.channels * g.height);  // one work-item per image row
  else
    detail::launch_planes(rt_, k, g.width, g.height, batch * g.channels);
}

void ConvOps::launch_output_stage(compute::kernel& k, size_t plane, size_t filters, size_t batch) {
  if (rt_.row_kernels())
    detail::launch_planes(rt_, k, plane, filters, batch);
  else
    detail::launch_row_blocks(rt_, k, plane, batch * filters);
}

void ConvOps::output_forward(const Tensor& cf, Tensor& y, const Tensor& bias, const ConvGeometry& g,
                             Activation act, Tensor* z) {
  using detail::u32;
  check_output_stage("conv_output_forward", cf, y, bias, g);
  if (activation_keeps_input(act) && (!z || z->shape() != y.shape()))
    throw ValidationError(
        fmt::format("conv_output_forward: {} needs z shaped as y {}", to_string(act), y.shape_string()));
  const Tensor& kept = z ? *z : y;  // written by the gelu kernels only
  compute::kernel& k = output_forward_[rt_.row_kernels()].at(size_t(act));
  detail::set_args(k, cf.mem(), y.mem(), u32(y.offset(), "offset"), bias.mem(), u32(bias.offset(), "offset"),
                   u32(y.rows(), "batch"), u32(bias.size(), "filters"), u32(g.plane(), "plane"), kept.mem(),
                   u32(kept.offset(), "offset"));
  launch_output_stage(k, g.plane(), bias.size(), y.rows());
}

void ConvOps::output_backward(const Tensor& y, const Tensor& dy, Tensor& dcf, Tensor& dbias,
                              const ConvGeometry& g, Activation act, bool sum_bias) {
  using detail::u32;
  check_output_stage("conv_output_backward", dcf, y, dbias, g);
  if (y.shape() != dy.shape())
    throw ValidationError(
        fmt::format("conv_output_backward: y {} and dy {} differ", y.shape_string(), dy.shape_string()));
  compute::kernel& k = output_backward_[backward_rows()].at(size_t(act));
  const size_t batch = y.rows(), filters = dbias.size();
  if (backward_rows()) {  // each row's sum too, then dbias from them
    if (row_sums_.size() < batch * filters) row_sums_ = Tensor(rt_, {batch * filters});
    detail::set_args(k, y.mem(), u32(y.offset(), "offset"), dy.mem(), u32(dy.offset(), "offset"), dcf.mem(),
                     row_sums_.mem(), u32(batch, "batch"), u32(filters, "filters"), u32(g.plane(), "plane"));
    detail::launch_1d(rt_, k, batch * filters);
    if (sum_bias) sum_bias_from_rows(batch, dbias);
    return;
  }
  detail::set_args(k, y.mem(), u32(y.offset(), "offset"), dy.mem(), u32(dy.offset(), "offset"), dcf.mem(),
                   u32(batch, "batch"), u32(filters, "filters"), u32(g.plane(), "plane"));
  launch_output_stage(k, g.plane(), filters, batch);
  if (!sum_bias) return;
  const size_t count = y.rows() * g.plane();
  detail::set_args(bias_backward_, dcf.mem(), u32(count, "count"), dbias.mem(),
                   u32(dbias.offset(), "offset"));
  const size_t local[2] = {lanes_, 1};
  detail::launch_groups_2d(rt_, bias_backward_, dbias.size(), local, dbias.size(), count);
}

void ConvOps::sum_bias_from_rows(size_t batch, Tensor& dbias) {
  using detail::u32;
  detail::set_args(bias_from_rows_, row_sums_.mem(), u32(batch, "batch"), u32(dbias.size(), "filters"),
                   dbias.mem(), u32(dbias.offset(), "offset"));
  detail::launch_1d(rt_, bias_from_rows_, dbias.size(), 4);
}

void ConvOps::pooled_output_backward(const Tensor& pooled, const Tensor& arg, const Tensor& dy_pool,
                                     Tensor& dcf, Tensor& dbias, const ConvGeometry& g, size_t pool,
                                     Activation act, bool sum_bias) {
  using detail::u32;
  if (!pools_in_output_stage() || act == Activation::gelu || pool == 0)
    throw ValidationError(
        fmt::format("conv_output_backward_pooled: not for {} on this driver, pool {}", to_string(act), pool));
  const size_t batch = dy_pool.rows(), filters = dbias.size(), out_h = g.out_h / pool, out_w = g.out_w / pool;
  if (filters == 0 || out_h == 0 || out_w == 0 || pooled.rows() != batch || dy_pool.cols() != pooled.cols() ||
      pooled.cols() != filters * out_h * out_w || arg.dtype() != DType::i32 || arg.size() < pooled.size() ||
      pooled.offset() != 0 || arg.offset() != 0 || dcf.size() < batch * filters * g.plane())
    throw ValidationError(fmt::format(
        "conv_output_backward_pooled: pooled {}, dy {}, arg {}, dz {} do not fit {} filters of {}×{} pooled "
        "{}×{}",
        pooled.shape_string(), dy_pool.shape_string(), arg.shape_string(), dcf.shape_string(), filters,
        g.out_h, g.out_w, pool, pool));
  check_offset_zero(dcf, "conv_output_backward_pooled");
  u32(dy_pool.offset() + dy_pool.size(), "a pooled gradient's size");
  u32(batch * filters * g.plane(), "a Conv2D's output size");
  if (row_sums_.size() < batch * filters) row_sums_ = Tensor(rt_, {batch * filters});
  compute::kernel& k = output_backward_pooled_.at(size_t(act));
  detail::set_args(k, pooled.mem(), arg.mem(), dy_pool.mem(), u32(dy_pool.offset(), "offset"), dcf.mem(),
                   row_sums_.mem(), u32(batch, "batch"), u32(filters, "filters"), u32(g.out_h, "height"),
                   u32(g.out_w, "width"), u32(pool, "pool"), u32(out_h, "out_h"), u32(out_w, "out_w"));
  detail::launch_1d(rt_, k, batch * filters);
  if (sum_bias) sum_bias_from_rows(batch, dbias);
}

}  // namespace anycl
