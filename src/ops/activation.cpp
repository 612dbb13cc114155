// Launchers for cl_kernels/activation.cl.
#include "activation.hpp"

#include "anycl/error.hpp"
#include "kernel_call.hpp"

namespace anycl {

const char* to_string(Activation act) noexcept {
  switch (act) {
    case Activation::relu:
      return "relu";
    case Activation::tanh:
      return "tanh";
    case Activation::sigmoid:
      return "sigmoid";
    case Activation::leaky_relu:
      return "leaky_relu";
    case Activation::elu:
      return "elu";
    case Activation::gelu:
      return "gelu";
    default:
      return "linear";
  }
}

Activation parse_activation(const std::string& name) {
  for (Activation a : {Activation::linear, Activation::relu, Activation::tanh, Activation::sigmoid,
                       Activation::leaky_relu, Activation::elu, Activation::gelu})
    if (name == to_string(a)) return a;
  throw ValidationError("unknown activation '" + name +
                        "' — choose relu, tanh, sigmoid, leaky_relu, elu, gelu or linear");
}

BiasActivation::BiasActivation(Runtime& rt)
    : rt_(rt),
      forward_(detail::kernel(rt, "activation", "bias_activation_forward")),
      backward_(detail::kernel(rt, "activation", "bias_activation_backward")),
      backward_dropped_(detail::kernel(rt, "activation", "bias_activation_dropout_backward")),
      channel_forward_(detail::kernel(rt, "activation", "channel_bias_activation_forward")),
      row_forward_(detail::kernel(rt, "activation", "dense_row_forward")),
      backward_runs_(detail::kernel(rt, "activation", "bias_activation_backward_runs")),
      backward_dropped_runs_(detail::kernel(rt, "activation", "bias_activation_dropout_backward_runs")) {
  // The backward kernel's work-group is BC columns × BR row lanes: 8 × 16 (activation.cl's default)
  // ran 128×512 in 0.05 ms on PoCL where 32 × 8 took 0.12 ms; a GPU gets rows read 32 floats wide.
  // Intel's CPU runtime (a CPU without PoCL's row kernels) vectorizes a row's columns across work-items
  // and pays for each barrier of the lanes' tree: 128×512 took 0.23–0.30 ms there at 8 × 16 and
  // 0.06–0.10 at 32 × 4 (64 × 2 and 128 × 1 alike; PoCL at 32 × 4: 0.31–0.38 ms).
  // A device that runs smaller groups gets it rebuilt with fewer lanes, then fewer columns.
  if (runs_) return;  // the runs of eight columns instead (activation.cl)
  if (rt.info().type == DeviceType::gpu) {
    columns_ = 32;
    lanes_ = 8;
  } else if (!rt.row_kernels()) {
    columns_ = 32;
    lanes_ = 4;
  }
  const size_t fits = detail::kernel_work_group_size(rt, backward_);
  while (columns_ * lanes_ > fits && lanes_ > 1) lanes_ /= 2;
  while (columns_ * lanes_ > fits && columns_ > 1) columns_ /= 2;
  if (columns_ != 8 || lanes_ != 16) {
    const std::string options = fmt::format("-DBC={} -DBR={}", columns_, lanes_);
    backward_ = detail::kernel_with_options(rt, "activation", "bias_activation_backward", options);
    backward_dropped_ =
        detail::kernel_with_options(rt, "activation", "bias_activation_dropout_backward", options);
  }
}

namespace {
void check_kept_input(const char* what, const Tensor& y, const Tensor* z) {
  if (z && z->shape() != y.shape())
    throw ValidationError(
        fmt::format("{}: z {} differs from y {}", what, z->shape_string(), y.shape_string()));
}
}  // namespace

void BiasActivation::forward(Tensor& y, const Tensor& bias, Activation act, Tensor* z) {
  if (bias.size() != y.cols())
    throw ValidationError(
        fmt::format("bias {} does not fit output {}", bias.shape_string(), y.shape_string()));
  check_kept_input("bias_activation_forward", y, z);
  using detail::u32;
  const Tensor& kept = z ? *z : y;  // never written without z
  detail::set_args(forward_, y.mem(), u32(y.offset(), "offset"), bias.mem(), u32(bias.offset(), "offset"),
                   u32(y.rows(), "rows"), u32(y.cols(), "cols"), cl_int(act), kept.mem(),
                   u32(kept.offset(), "offset"), cl_int(z != nullptr));
  detail::launch_1d(rt_, forward_, y.size(), 64, /*per_item=*/16);  // activation.cl's bias_activation_forward
}

void BiasActivation::forward_row(const Tensor& x, const Tensor& w, const Tensor& bias, Tensor& y,
                                 Activation act) {
  const size_t k = w.rows(), cols = w.cols();
  if (x.rows() != 1 || x.cols() != k || y.rows() != 1 || y.cols() != cols || bias.size() != cols)
    throw ValidationError(fmt::format("dense_row_forward: x {} · w {} + bias {} → y {} do not fit (one row)",
                                      x.shape_string(), w.shape_string(), bias.shape_string(),
                                      y.shape_string()));
  using detail::u32;
  detail::set_args(row_forward_, x.mem(), u32(x.offset(), "offset"), w.mem(), u32(w.offset(), "offset"),
                   bias.mem(), u32(bias.offset(), "offset"), y.mem(), u32(y.offset(), "offset"), u32(k, "k"),
                   u32(cols, "cols"), cl_int(act));
  // 16 outputs per work-item; small groups, so the few work-items of a layer spread over the cores.
  detail::launch_1d(rt_, row_forward_, cols, 4, /*per_item=*/16);
}

void BiasActivation::backward(const Tensor& y, Tensor& dy, Tensor& dbias, Activation act) {
  if (y.shape() != dy.shape() || dbias.size() != y.cols())
    throw ValidationError(fmt::format("bias_activation_backward: y {}, dy {}, dbias {} do not fit",
                                      y.shape_string(), dy.shape_string(), dbias.shape_string()));
  using detail::u32;
  compute::kernel& k = runs_ ? backward_runs_ : backward_;
  detail::set_args(k, y.mem(), u32(y.offset(), "offset"), dy.mem(), u32(dy.offset(), "offset"), dbias.mem(),
                   u32(dbias.offset(), "offset"), u32(y.rows(), "rows"), u32(y.cols(), "cols"), cl_int(act));
  if (runs_) {
    detail::launch_1d(rt_, k, (y.cols() + 7) / 8, 4);  // small groups over every core
    return;
  }
  const size_t local[2] = {columns_, lanes_};
  detail::launch_groups_2d(rt_, backward_, (y.cols() + columns_ - 1) / columns_, local, y.rows(), y.cols());
}

void BiasActivation::backward_dropped(const Tensor& y, Tensor& dy, const DeviceBuffer& keep,
                                      size_t keep_offset, float scale, Tensor& dbias, Activation act) {
  if (y.shape() != dy.shape() || dbias.size() != y.cols())
    throw ValidationError(fmt::format("bias_activation_dropout_backward: y {}, dy {}, dbias {} do not fit",
                                      y.shape_string(), dy.shape_string(), dbias.shape_string()));
  if (keep_offset > keep.bytes() || y.size() > keep.bytes() - keep_offset)
    throw ValidationError(
        fmt::format("bias_activation_dropout_backward: a mask of {} bytes at {} does not fit "
                    "its {}-byte buffer",
                    y.size(), keep_offset, keep.bytes()));
  using detail::u32;
  if (runs_) {
    detail::set_args(backward_dropped_runs_, y.mem(), u32(y.offset(), "offset"), dy.mem(),
                     u32(dy.offset(), "offset"), keep.mem(), u32(keep_offset, "offset"), cl_float(scale),
                     dbias.mem(), u32(dbias.offset(), "offset"), u32(y.rows(), "rows"), u32(y.cols(), "cols"),
                     cl_int(act));
    detail::launch_1d(rt_, backward_dropped_runs_, (y.cols() + 7) / 8, 4);
    return;
  }
  detail::set_args(backward_dropped_, y.mem(), u32(y.offset(), "offset"), dy.mem(),
                   u32(dy.offset(), "offset"), keep.mem(), u32(keep_offset, "offset"), cl_float(scale),
                   dbias.mem(), u32(dbias.offset(), "offset"), u32(y.rows(), "rows"), u32(y.cols(), "cols"),
                   cl_int(act));
  const size_t local[2] = {columns_, lanes_};
  detail::launch_groups_2d(rt_, backward_dropped_, (y.cols() + columns_ - 1) / columns_, local, y.rows(),
                           y.cols());
}

namespace {
size_t channel_count(const Tensor& y, const Tensor& bias, size_t plane, const char* what) {
  if (plane == 0 || bias.size() * plane != y.cols())
    throw ValidationError(fmt::format("{}: bias {} × plane {} does not fit output {}", what,
                                      bias.shape_string(), plane, y.shape_string()));
  return bias.size();
}
}  // namespace

void BiasActivation::forward_channels(Tensor& y, const Tensor& bias, size_t plane, Activation act,
                                      Tensor* z) {
  using detail::u32;
  const size_t filters = channel_count(y, bias, plane, "channel_bias_activation_forward");
  check_kept_input("channel_bias_activation_forward", y, z);
  const Tensor& kept = z ? *z : y;  // never written without z
  detail::set_args(channel_forward_, y.mem(), u32(y.offset(), "offset"), bias.mem(),
                   u32(bias.offset(), "offset"), u32(y.rows(), "batch"), u32(filters, "filters"),
                   u32(plane, "plane"), cl_int(act), kept.mem(), u32(kept.offset(), "offset"),
                   cl_int(z != nullptr));
  detail::launch_1d(rt_, channel_forward_, y.size());
}

}  // namespace anycl
