// Launchers for cl_kernels/batchnorm.cl: the reductions run one work-group per channel.
#include "batchnorm.hpp"

#include "anycl/error.hpp"
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

BatchNormOp::BatchNormOp(Runtime& rt)
    : rt_(rt),
      stats_(detail::single_group_kernel(rt, "batchnorm", "batchnorm_stats", 1, group_)),
      forward_(detail::kernel(rt, "batchnorm", "batchnorm_forward")),
      sums_(detail::single_group_kernel(rt, "batchnorm", "batchnorm_backward_sums", 2, group_sums_)),
      dx_(detail::kernel(rt, "batchnorm", "batchnorm_backward_dx")) {}

void BatchNormOp::stats(const Tensor& x, const BatchNormShape& s, Tensor& stats, Tensor* moving,
                        float momentum) {
  using detail::u32;
  check_activations("batchnorm_stats", x, s);
  check("batchnorm_stats: stats", stats, 2 * s.channels);
  if (moving) check("batchnorm_stats: moving statistics", *moving, 2 * s.channels);
  if (stats.offset() != 0) throw ValidationError("batchnorm_stats: the stats tensor must start its buffer");
  Tensor& m = moving ? *moving : stats;
  detail::set_args(stats_, x.mem(), u32(x.offset(), "offset"), u32(s.batch, "batch"),
                   u32(s.channels, "channels"), u32(s.plane, "plane"), stats.mem(), m.mem(),
                   u32(m.offset(), "offset"), cl_float(momentum), cl_uint(moving ? 1 : 0));
  const size_t global = s.channels * group_, local = group_;
  detail::enqueue_range(rt_, stats_, 1, &global, &local, [&] {
    return fmt::format("batchnorm_stats {}x{}x{}", s.batch, s.channels, s.plane);
  });
}

void BatchNormOp::forward(const Tensor& x, Tensor& y, const BatchNormShape& s, const Tensor& stats,
                          const Tensor& params, float epsilon) {
  using detail::u32;
  check_activations("batchnorm_forward", x, s);
  check_activations("batchnorm_forward: y", y, s);
  check("batchnorm_forward: stats", stats, 2 * s.channels);
  check("batchnorm_forward: params", params, 2 * s.channels);
  detail::set_args(forward_, x.mem(), u32(x.offset(), "offset"), y.mem(), u32(y.offset(), "offset"),
                   u32(s.size(), "size"), u32(s.channels, "channels"), u32(s.plane, "plane"), stats.mem(),
                   u32(stats.offset(), "offset"), params.mem(), u32(params.offset(), "offset"),
                   cl_float(epsilon));
  detail::launch_1d(rt_, forward_, s.size(), 64);
}

void BatchNormOp::backward(const Tensor& x, const Tensor& dy, const BatchNormShape& s, const Tensor& stats,
                           const Tensor& params, float epsilon, Tensor& grads, Tensor* dx) {
  using detail::u32;
  check_activations("batchnorm_backward", x, s);
  check_activations("batchnorm_backward: dy", dy, s);
  check("batchnorm_backward: stats", stats, 2 * s.channels);
  check("batchnorm_backward: params", params, 2 * s.channels);
  check("batchnorm_backward: grads", grads, 2 * s.channels);
  if (stats.offset() != 0)
    throw ValidationError("batchnorm_backward: the stats tensor must start its buffer");
  detail::set_args(sums_, x.mem(), u32(x.offset(), "offset"), dy.mem(), u32(dy.offset(), "offset"),
                   u32(s.batch, "batch"), u32(s.channels, "channels"), u32(s.plane, "plane"), stats.mem(),
                   cl_float(epsilon), grads.mem(), u32(grads.offset(), "offset"));
  const size_t global = s.channels * group_sums_, local = group_sums_;
  detail::enqueue_range(rt_, sums_, 1, &global, &local, [&] {
    return fmt::format("batchnorm_backward_sums {}x{}x{}", s.batch, s.channels, s.plane);
  });
  if (!dx) return;
  check_activations("batchnorm_backward: dx", *dx, s);
  detail::set_args(dx_, x.mem(), u32(x.offset(), "offset"), dy.mem(), u32(dy.offset(), "offset"), dx->mem(),
                   u32(dx->offset(), "offset"), u32(s.size(), "size"), u32(s.channels, "channels"),
                   u32(s.plane, "plane"), u32(s.batch * s.plane, "count"), stats.mem(), cl_float(epsilon),
                   params.mem(), u32(params.offset(), "offset"), grads.mem(), u32(grads.offset(), "offset"));
  detail::launch_1d(rt_, dx_, s.size(), 64);
}

}  // namespace anycl
