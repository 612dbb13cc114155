// Launchers for cl_kernels/batchnorm.cl: the reductions run one work-group per channel on CPU
// runtimes, split over several a channel elsewhere (batchnorm_split.hpp); the element passes over a
// 3-D range (plane, channels, batch), or (channels, 1, batch) for a flat input.
#include "batchnorm.hpp"

#include <fmt/format.h>

#include <string>

#include "anycl/error.hpp"
#include "batchnorm_split.hpp"
#include "kernel_call.hpp"

namespace anycl {
namespace {

void check(const char* what, const Tensor& t, size_t floats) {
  if (t.size() < floats)
    throw ValidationError(fmt::format("{}: {} floats needed, the tensor {} holds {}", what, floats,
                                      t.shape_string(), t.size()));
}

void check_activations(const char* what, const Tensor& x, const BatchNormShape& s) {
  if (x.size() != s.size() || s.size() == 0)
    throw ValidationError(
        fmt::format("{}: x {} is not ({} × {} × {})", what, x.shape_string(), s.batch, s.channels, s.plane));
  detail::u32(s.size(), "batch-norm elements");
}

}  // namespace

compute::kernel detail::batchnorm_group_kernel(Runtime& rt, const char* name, const std::string& act,
                                               size_t& work_group) {
  const DeviceInfo& info = rt.info();
  work_group = 256;
  while (work_group > 1 &&
         (work_group > info.max_work_group_size || 2 * work_group * sizeof(float) > info.local_mem_bytes))
    work_group /= 2;
  for (;;) {
    compute::kernel k =
        detail::kernel_with_options(rt, "batchnorm", name, fmt::format("{} -DWG={}", act, work_group));
    const size_t fits = detail::kernel_work_group_size(rt, k);
    if (work_group <= fits || work_group == 1) return k;
    while (work_group > fits && work_group > 1) work_group /= 2;
  }
}

BatchNormOp::BatchNormOp(Runtime& rt, Activation act) : rt_(rt) {
  // PoCL's CPU driver: the reductions walk whole rows, eight values at a time (batchnorm.cl's BN_ROWS).
  const std::string option = fmt::format("-DBN_ACT={} -DBN_ROWS={}", int(act), rt.row_kernels() ? 1 : 0);
  stats_ = detail::batchnorm_group_kernel(rt, "batchnorm_stats", option, group_);
  sums_ = detail::batchnorm_group_kernel(rt, "batchnorm_backward_sums", option, group_sums_);
  const detail::RuntimeImpl& impl = detail::RuntimeImpl::of(rt);
  if (impl.split_reductions)
    split_ = std::make_unique<BatchNormSplitReductions>(rt, option, impl.forced_splits);
  forward_ = detail::kernel_with_options(rt, "batchnorm", "batchnorm_forward", option);
  dx_ = detail::kernel_with_options(rt, "batchnorm", "batchnorm_backward_dx", option);
  if (rt.row_kernels()) {  // the element passes in rows where a plane has at least 8 values
    forward_rows_ = detail::kernel_with_options(rt, "batchnorm", "batchnorm_forward_rows", option);
    dx_rows_ = detail::kernel_with_options(rt, "batchnorm", "batchnorm_backward_dx_rows", option);
    forward_rows_pooled_ =
        detail::kernel_with_options(rt, "batchnorm", "batchnorm_forward_rows_pooled", option);
    sums_pooled_ =
        detail::batchnorm_group_kernel(rt, "batchnorm_backward_sums_pooled", option, group_sums_pooled_);
    dx_rows_pooled_ =
        detail::kernel_with_options(rt, "batchnorm", "batchnorm_backward_dx_rows_pooled", option);
  }
}

BatchNormOp::~BatchNormOp() = default;

void BatchNormOp::launch_elements(compute::kernel& k, compute::kernel& rows, const BatchNormShape& s) {
  if (rows.get() && s.plane >= 8) {  // the same arguments, set on both
    detail::launch_1d(rt_, rows, s.batch * s.channels);
    return;
  }
  if (s.plane == 1)
    detail::launch_planes(rt_, k, s.channels, 1, s.batch);
  else
    detail::launch_planes(rt_, k, s.plane, s.channels, s.batch);
}

void BatchNormOp::train_forward(const Tensor& x, Tensor& y, const BatchNormShape& s, Tensor& stats,
                                Tensor* moving, float momentum, const Tensor& params, float epsilon) {
  check_activations("batchnorm_stats", x, s);
  check_activations("batchnorm_stats: y", y, s);
  check("batchnorm_stats: stats", stats, 2 * s.channels);
  check("batchnorm_stats: params", params, 2 * s.channels);
  batch_statistics(x, s, stats, moving, momentum);
  forward(x, y, s, stats, params, epsilon);
}

void BatchNormOp::batch_statistics(const Tensor& x, const BatchNormShape& s, Tensor& stats, Tensor* moving,
                                   float momentum) {
  using detail::u32;
  if (moving) check("batchnorm_stats: moving statistics", *moving, 2 * s.channels);
  if (stats.offset() != 0) throw ValidationError("batchnorm_stats: the stats tensor must start its buffer");
  const BatchNormSplit plan = split_ ? split_->plan(s) : BatchNormSplit{};
  if (split_ && split_->worth(plan)) {
    split_->stats(x, s, plan, stats, moving, momentum);
    return;
  }
  Tensor& m = moving ? *moving : stats;
  detail::set_args(stats_, x.mem(), u32(x.offset(), "offset"), u32(s.batch, "batch"),
                   u32(s.channels, "channels"), u32(s.plane, "plane"), stats.mem(), m.mem(),
                   u32(m.offset(), "offset"), cl_float(momentum), cl_uint(moving ? 1 : 0));
  const size_t global = s.channels * group_, local = group_;
  detail::enqueue_range(rt_, stats_, 1, &global, &local, [&] {
    return fmt::format("batchnorm_stats {}x{}x{}", s.batch, s.channels, s.plane);
  });
}

void BatchNormOp::train_forward_pooled(const Tensor& x, Tensor& pooled, Tensor& arg, const BatchNormShape& s,
                                       const PoolGeometry& pool, Tensor& stats, Tensor* moving,
                                       float momentum, const Tensor& params, float epsilon) {
  check_pooled(x, pooled, arg, s, pool);  // before the moving statistics change
  check("batchnorm_stats: stats", stats, 2 * s.channels);
  check("batchnorm_stats: params", params, 2 * s.channels);
  batch_statistics(x, s, stats, moving, momentum);
  forward_pooled(x, pooled, arg, s, pool, stats, params, epsilon);
}

void BatchNormOp::check_pooled(const Tensor& x, const Tensor& pooled, const Tensor& arg,
                               const BatchNormShape& s, const PoolGeometry& pool) const {
  check_activations("batchnorm_forward_pooled", x, s);
  const size_t windows = pool.out_h * pool.out_w;
  if (!pools_gradient(s.plane) || pool.size < 2 || pool.size != pool.stride || pool.channels != s.channels ||
      pool.height * pool.width != s.plane || pool.out_h * pool.size > pool.height ||
      pool.out_w * pool.size > pool.width)
    throw ValidationError(
        fmt::format("batchnorm_forward_pooled: windows of {} moved by {} over ({}, {}, {}) do not fit this "
                    "layer's ({} × {}) "
                    "on this driver (the row forms: a plane of at least 8, windows that do not overlap)",
                    pool.size, pool.stride, pool.channels, pool.height, pool.width, s.channels, s.plane));
  if (pooled.size() != s.batch * s.channels * windows || arg.size() < pooled.size() ||
      arg.dtype() != DType::i32 || pooled.offset() != 0 || arg.offset() != 0)
    throw ValidationError(
        fmt::format("batchnorm_forward_pooled: pooled {}, arg {} do not fit ({} × {} × {}) "
                    "at offset 0, arg i32",
                    pooled.shape_string(), arg.shape_string(), s.batch, s.channels, windows));
}

void BatchNormOp::forward_pooled(const Tensor& x, Tensor& pooled, Tensor& arg, const BatchNormShape& s,
                                 const PoolGeometry& pool, const Tensor& stats, const Tensor& params,
                                 float epsilon) {
  using detail::u32;
  check_pooled(x, pooled, arg, s, pool);
  check("batchnorm_forward_pooled: stats", stats, 2 * s.channels);
  check("batchnorm_forward_pooled: params", params, 2 * s.channels);
  detail::set_args(forward_rows_pooled_, x.mem(), u32(x.offset(), "offset"), pooled.mem(), arg.mem(),
                   u32(pool.height, "height"), u32(pool.width, "width"), u32(pool.size, "size"),
                   u32(pool.out_h, "out_h"), u32(pool.out_w, "out_w"), u32(s.channels, "channels"),
                   u32(s.batch, "batch"), stats.mem(), u32(stats.offset(), "offset"), params.mem(),
                   u32(params.offset(), "offset"), cl_float(epsilon));
  detail::launch_1d(rt_, forward_rows_pooled_, s.batch * s.channels);
}

void BatchNormOp::forward(const Tensor& x, Tensor& y, const BatchNormShape& s, const Tensor& stats,
                          const Tensor& params, float epsilon) {
  using detail::u32;
  check_activations("batchnorm_forward", x, s);
  check_activations("batchnorm_forward: y", y, s);
  check("batchnorm_forward: stats", stats, 2 * s.channels);
  check("batchnorm_forward: params", params, 2 * s.channels);
  const bool flat = s.plane == 1;
  for (compute::kernel* k : {&forward_, &forward_rows_})
    if (k->get())
      detail::set_args(*k, x.mem(), u32(x.offset(), "offset"), y.mem(), u32(y.offset(), "offset"),
                       u32(flat ? s.channels : s.plane, "columns"), u32(s.channels, "channels"),
                       u32(s.batch, "batch"), cl_uint(flat ? 1 : 0), stats.mem(),
                       u32(stats.offset(), "offset"), params.mem(), u32(params.offset(), "offset"),
                       cl_float(epsilon));
  launch_elements(forward_, forward_rows_, s);
}

void BatchNormOp::backward(const Tensor& x, const Tensor& dy, const BatchNormShape& s, const Tensor& stats,
                           const Tensor& params, float epsilon, Tensor& grads, Tensor* dx) {
  using detail::u32;
  check_activations("batchnorm_backward", x, s);
  check_activations("batchnorm_backward: dy", dy, s);
  check("batchnorm_backward: stats", stats, 2 * s.channels);
  check("batchnorm_backward: params", params, 2 * s.channels);
  check("batchnorm_backward: grads", grads, 2 * s.channels);
  if (dx) check_activations("batchnorm_backward: dx", *dx, s);
  if (stats.offset() != 0)
    throw ValidationError("batchnorm_backward: the stats tensor must start its buffer");
  const BatchNormSplit plan = split_ ? split_->plan(s) : BatchNormSplit{};
  if (split_ && split_->worth(plan))
    split_->sums(x, dy, s, plan, stats, params, epsilon, grads);
  else
    one_group_sums(x, dy, s, stats, params, epsilon, grads);
  if (!dx) return;
  const bool flat = s.plane == 1;
  for (compute::kernel* k : {&dx_, &dx_rows_})
    if (k->get())
      detail::set_args(*k, x.mem(), u32(x.offset(), "offset"), dy.mem(), u32(dy.offset(), "offset"),
                       dx->mem(), u32(dx->offset(), "offset"), u32(flat ? s.channels : s.plane, "columns"),
                       u32(s.channels, "channels"), u32(s.batch, "batch"), cl_uint(flat ? 1 : 0),
                       u32(s.batch * s.plane, "count"), stats.mem(), cl_float(epsilon), params.mem(),
                       u32(params.offset(), "offset"), grads.mem(), u32(grads.offset(), "offset"));
  launch_elements(dx_, dx_rows_, s);
}

void BatchNormOp::backward_pooled(const Tensor& x, const Tensor& dyp, const Tensor& arg, size_t pooled,
                                  const BatchNormShape& s, const Tensor& stats, const Tensor& params,
                                  float epsilon, Tensor& grads, Tensor* dx) {
  using detail::u32;
  if (!pools_gradient(s.plane))
    throw ValidationError(
        fmt::format("batchnorm_backward_pooled: not on this driver or for a plane of {} values "
                    "(the row forms, a plane of at least 8)",
                    s.plane));
  check_activations("batchnorm_backward_pooled", x, s);
  const BatchNormShape windows{s.batch, s.channels, pooled};
  check_activations("batchnorm_backward_pooled: dy", dyp, windows);
  if (arg.dtype() != DType::i32 || arg.size() != windows.size())
    throw ValidationError(fmt::format("batchnorm_backward_pooled: arg {} is not i32 ({} × {} × {})",
                                      arg.shape_string(), s.batch, s.channels, pooled));
  check("batchnorm_backward_pooled: stats", stats, 2 * s.channels);
  check("batchnorm_backward_pooled: params", params, 2 * s.channels);
  check("batchnorm_backward_pooled: grads", grads, 2 * s.channels);
  if (dx) check_activations("batchnorm_backward_pooled: dx", *dx, s);
  if (stats.offset() != 0)
    throw ValidationError("batchnorm_backward_pooled: the stats tensor must start its buffer");
  detail::set_args(sums_pooled_, x.mem(), u32(x.offset(), "offset"), dyp.mem(), u32(dyp.offset(), "offset"),
                   arg.mem(), u32(arg.offset(), "offset"), u32(s.batch, "batch"), u32(s.channels, "channels"),
                   u32(s.plane, "plane"), u32(pooled, "windows"), stats.mem(), cl_float(epsilon),
                   params.mem(), u32(params.offset(), "offset"), grads.mem(), u32(grads.offset(), "offset"));
  const size_t global = s.channels * group_sums_pooled_, local = group_sums_pooled_;
  detail::enqueue_range(rt_, sums_pooled_, 1, &global, &local, [&] {
    return fmt::format("batchnorm_backward_sums_pooled {}x{}x{}", s.batch, s.channels, pooled);
  });
  if (!dx) return;
  detail::set_args(dx_rows_pooled_, x.mem(), u32(x.offset(), "offset"), dyp.mem(),
                   u32(dyp.offset(), "offset"), arg.mem(), u32(arg.offset(), "offset"), dx->mem(),
                   u32(dx->offset(), "offset"), u32(s.plane, "columns"), u32(pooled, "windows"),
                   u32(s.channels, "channels"), u32(s.batch, "batch"), u32(s.batch * s.plane, "count"),
                   stats.mem(), cl_float(epsilon), params.mem(), u32(params.offset(), "offset"), grads.mem(),
                   u32(grads.offset(), "offset"));
  detail::launch_1d(rt_, dx_rows_pooled_, s.batch * s.channels);
}

// The one-group form of the gradient sums: one work-group a channel.
void BatchNormOp::one_group_sums(const Tensor& x, const Tensor& dy, const BatchNormShape& s,
                                 const Tensor& stats, const Tensor& params, float epsilon, Tensor& grads) {
  using detail::u32;
  detail::set_args(sums_, x.mem(), u32(x.offset(), "offset"), dy.mem(), u32(dy.offset(), "offset"),
                   u32(s.batch, "batch"), u32(s.channels, "channels"), u32(s.plane, "plane"), stats.mem(),
                   cl_float(epsilon), params.mem(), u32(params.offset(), "offset"), grads.mem(),
                   u32(grads.offset(), "offset"));
  const size_t global = s.channels * group_sums_, local = group_sums_;
  detail::enqueue_range(rt_, sums_, 1, &global, &local, [&] {
    return fmt::format("batchnorm_backward_sums {}x{}x{}", s.batch, s.channels, s.plane);
  });
}

}  // namespace anycl
