// Launcher for cl_kernels/elementwise_loss.cl: the loss kernel in one work-group whose size fits the
// device, and the sigmoid of a binary cross-entropy model's predictions.
#include "anycl/losses/elementwise_loss.hpp"

#include "anycl/error.hpp"
#include "ops/kernel_call.hpp"

namespace anycl {

namespace {

int kind_of(const std::string& name) {  // the kernel's LOSS_* constants
  if (name == "mae") return 0;
  if (name == "huber") return 1;
  if (name == "binary_crossentropy") return 2;
  throw ValidationError(
      fmt::format("ElementwiseLoss: '{}' is not one of its losses (mae, huber, binary_crossentropy)", name));
}

}  // namespace

struct ElementwiseLoss::Kernels {
  size_t work_group = 0;
  compute::kernel loss, sigmoid;
};

ElementwiseLoss::ElementwiseLoss(Runtime& rt, const std::string& name)
    : rt_(rt), name_(name), kind_(kind_of(name)), kernels_(std::make_unique<Kernels>()) {
  // One work-group with 2·WG floats of local memory (loss and metric partial sums).
  kernels_->loss =
      detail::single_group_kernel(rt, "elementwise_loss", "elementwise_loss", 2, kernels_->work_group);
  if (kind_ == 2) kernels_->sigmoid = detail::kernel(rt, "elementwise_loss", "sigmoid_forward");
}

ElementwiseLoss::~ElementwiseLoss() = default;

std::string ElementwiseLoss::metric_name() const { return kind_ == 2 ? "accuracy" : "mae"; }

bool ElementwiseLoss::predicts_classes() const { return kind_ == 2; }

void ElementwiseLoss::run(const Tensor& outputs, TargetsView targets, Tensor* grad, float grad_scale,
                          DeviceBuffer& metrics, size_t slot) {
  const char* n = name_.c_str();
  if (grad && grad->shape() != outputs.shape())
    throw ValidationError(fmt::format("{}: gradient {} differs from outputs {}", n, grad->shape_string(),
                                      outputs.shape_string()));
  if (outputs.dtype() != DType::f32 || (grad && grad->dtype() != DType::f32))
    throw ValidationError(fmt::format("{}: outputs and gradient must be f32 tensors", n));
  if (!targets.buffer) throw ValidationError(fmt::format("{}: no targets", n));
  if (targets.buffer->bytes() / sizeof(float) < targets.offset ||
      targets.buffer->bytes() / sizeof(float) - targets.offset < outputs.size())
    throw ValidationError(fmt::format("{}: the targets buffer holds fewer than the {} values outputs {} need",
                                      n, outputs.size(), outputs.shape_string()));
  if (metrics.bytes() < (slot + 1) * 2 * sizeof(float))
    throw ValidationError(fmt::format("{}: metrics slot {} beyond the buffer", n, slot));
  using detail::u32;
  const cl_mem g = grad ? grad->mem() : outputs.mem();  // never written when with_grad == 0
  detail::set_args(kernels_->loss, outputs.mem(), u32(outputs.offset(), "offset"), targets.buffer->mem(),
                   u32(targets.offset, "offset"), g, u32(grad ? grad->offset() : 0, "offset"),
                   u32(outputs.rows(), "rows"), u32(outputs.cols(), "outputs"), cl_int(kind_),
                   cl_float(grad_scale), cl_int(grad != nullptr), metrics.mem(), u32(slot, "slot"));
  detail::launch_1d(rt_, kernels_->loss, kernels_->work_group, kernels_->work_group);
}

void ElementwiseLoss::predictions(const Tensor& outputs, Tensor& out) {
  if (kind_ != 2) Loss::predictions(outputs, out);  // throws: the outputs are the predictions
  if (out.shape() != outputs.shape())
    throw ValidationError(
        fmt::format("sigmoid: probs {} differs from logits {}", out.shape_string(), outputs.shape_string()));
  using detail::u32;
  detail::set_args(kernels_->sigmoid, outputs.mem(), u32(outputs.offset(), "offset"), out.mem(),
                   u32(out.offset(), "offset"), cl_ulong(outputs.size()));
  detail::launch_1d(rt_, kernels_->sigmoid, outputs.size());
}

}  // namespace anycl
