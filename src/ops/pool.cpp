// Launchers for cl_kernels/pool.cl.
#include "pool.hpp"

#include "anycl/error.hpp"
#include "kernel_call.hpp"

namespace anycl {

MaxPoolOp::MaxPoolOp(Runtime& rt)
    : rt_(rt),
      forward_(detail::kernel(rt, "pool", "maxpool_forward")),
      backward_(detail::kernel(rt, "pool", "maxpool_backward")) {}

void MaxPoolOp::forward(const Tensor& x, Tensor& y, Tensor& arg, const PoolGeometry& g) {
  using detail::u32;
  const size_t planes = x.rows() * g.channels, outputs = planes * g.out_h * g.out_w;
  if (x.cols() != g.channels * g.height * g.width || y.size() != outputs || arg.size() < outputs ||
      arg.dtype() != DType::i32 || y.offset() != 0 || arg.offset() != 0)
    throw ValidationError(fmt::format(
        "maxpool_forward: x {}, y {}, arg {} do not fit ({}, {}, {}) pooled {}×{}", x.shape_string(),
        y.shape_string(), arg.shape_string(), g.channels, g.height, g.width, g.size, g.size));
  detail::set_args(forward_, x.mem(), u32(x.offset(), "offset"), y.mem(), arg.mem(), u32(planes, "planes"),
                   u32(g.height, "height"), u32(g.width, "width"), u32(g.size, "size"),
                   u32(g.stride, "stride"), u32(g.out_h, "out_h"), u32(g.out_w, "out_w"));
  detail::launch_planes(rt_, forward_, g.out_w, g.out_h, planes);
}

void MaxPoolOp::backward(const Tensor& dy, const Tensor& arg, Tensor& dx, const PoolGeometry& g) {
  using detail::u32;
  const size_t planes = dx.rows() * g.channels;
  if (dx.cols() != g.channels * g.height * g.width || dy.size() != planes * g.out_h * g.out_w ||
      arg.size() < dy.size() || dx.offset() != 0)
    throw ValidationError(fmt::format(
        "maxpool_backward: dy {}, arg {}, dx {} do not fit ({}, {}, {}) pooled {}×{}", dy.shape_string(),
        arg.shape_string(), dx.shape_string(), g.channels, g.height, g.width, g.size, g.size));
  detail::set_args(backward_, dy.mem(), u32(dy.offset(), "offset"), arg.mem(), dx.mem(),
                   u32(planes, "planes"), u32(g.height, "height"), u32(g.width, "width"), u32(g.size, "size"),
                   u32(g.stride, "stride"), u32(g.out_h, "out_h"), u32(g.out_w, "out_w"));
  detail::u32(planes * g.height * g.width, "maxpool_backward's input size");
  detail::launch_1d(rt_, backward_, planes * g.height);
}

AvgPoolOp::AvgPoolOp(Runtime& rt)
    : rt_(rt),
      forward_(detail::kernel(rt, "pool", "avgpool_forward")),
      backward_(detail::kernel(rt, "pool", "avgpool_backward")) {}

void AvgPoolOp::forward(const Tensor& x, Tensor& y, const PoolGeometry& g) {
  using detail::u32;
  const size_t planes = x.rows() * g.channels, outputs = planes * g.out_h * g.out_w;
  if (x.cols() != g.channels * g.height * g.width || y.size() != outputs || y.offset() != 0)
    throw ValidationError(fmt::format("avgpool_forward: x {}, y {} do not fit ({}, {}, {}) pooled {}×{}",
                                      x.shape_string(), y.shape_string(), g.channels, g.height, g.width,
                                      g.size, g.size));
  detail::set_args(forward_, x.mem(), u32(x.offset(), "offset"), y.mem(), u32(planes, "planes"),
                   u32(g.height, "height"), u32(g.width, "width"), u32(g.size, "size"),
                   u32(g.stride, "stride"), u32(g.out_h, "out_h"), u32(g.out_w, "out_w"));
  detail::launch_planes(rt_, forward_, g.out_w, g.out_h, planes);
}

void AvgPoolOp::backward(const Tensor& dy, Tensor& dx, const PoolGeometry& g) {
  using detail::u32;
  const size_t planes = dx.rows() * g.channels;
  if (dx.cols() != g.channels * g.height * g.width || dy.size() != planes * g.out_h * g.out_w ||
      dx.offset() != 0)
    throw ValidationError(fmt::format("avgpool_backward: dy {}, dx {} do not fit ({}, {}, {}) pooled {}×{}",
                                      dy.shape_string(), dx.shape_string(), g.channels, g.height, g.width,
                                      g.size, g.size));
  detail::set_args(backward_, dy.mem(), u32(dy.offset(), "offset"), dx.mem(), u32(planes, "planes"),
                   u32(g.height, "height"), u32(g.width, "width"), u32(g.size, "size"),
                   u32(g.stride, "stride"), u32(g.out_h, "out_h"), u32(g.out_w, "out_w"));
  detail::launch_1d(rt_, backward_, dx.size());
}

GlobalPoolOp::GlobalPoolOp(Runtime& rt, bool max)
    : rt_(rt),
      max_(max),
      forward_(detail::kernel(rt, "pool", "global_pool_forward")),
      backward_(detail::kernel(rt, "pool", "global_pool_backward")) {}

void GlobalPoolOp::forward(const Tensor& x, Tensor& y, Tensor& arg, size_t plane_size) {
  using detail::u32;
  const size_t planes = y.size();
  if (plane_size == 0 || x.size() != planes * plane_size || y.offset() != 0 || arg.size() < planes ||
      arg.dtype() != DType::i32 || arg.offset() != 0)
    throw ValidationError(fmt::format("global_pool_forward: x {}, y {}, arg {} do not fit planes of {}",
                                      x.shape_string(), y.shape_string(), arg.shape_string(), plane_size));
  detail::set_args(forward_, x.mem(), u32(x.offset(), "offset"), y.mem(), arg.mem(), u32(planes, "planes"),
                   u32(plane_size, "plane size"), cl_int(max_));
  detail::launch_1d(rt_, forward_, planes);
}

void GlobalPoolOp::backward(const Tensor& dy, const Tensor& arg, Tensor& dx, size_t plane_size) {
  using detail::u32;
  const size_t planes = dy.size();
  if (plane_size == 0 || dx.size() != planes * plane_size || dx.offset() != 0 || arg.size() < planes)
    throw ValidationError(fmt::format("global_pool_backward: dy {}, arg {}, dx {} do not fit planes of {}",
                                      dy.shape_string(), arg.shape_string(), dx.shape_string(), plane_size));
  detail::set_args(backward_, dy.mem(), u32(dy.offset(), "offset"), arg.mem(), dx.mem(),
                   u32(planes, "planes"), u32(plane_size, "plane size"), cl_int(max_));
  detail::u32(dx.size(), "global_pool_backward's input size");
  detail::launch_1d(rt_, backward_, dx.size());
}

}  // namespace anycl
