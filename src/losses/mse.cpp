// Launcher for cl_kernels/mse.cl: one work-group whose size fits the device and the compiled kernel.
#include "anycl/losses/mse.hpp"

#include "anycl/error.hpp"
#include "ops/kernel_call.hpp"

namespace anycl {

struct MeanSquaredError::Kernel {
  size_t work_group = 0;
  compute::kernel kernel;
};

MeanSquaredError::MeanSquaredError(Runtime& rt) : rt_(rt), kernel_(std::make_unique<Kernel>()) {
  // One work-group with 2·WG floats of local memory (loss and MAE partial sums).
  kernel_->kernel = detail::single_group_kernel(rt, "mse", "mse", 2, kernel_->work_group);
}

MeanSquaredError::~MeanSquaredError() = default;

void MeanSquaredError::run(const Tensor& outputs, TargetsView targets, Tensor* grad, float grad_scale,
                           DeviceBuffer& metrics, size_t slot) {
  if (grad && grad->shape() != outputs.shape())
    throw ValidationError(fmt::format("mse: gradient {} differs from outputs {}", grad->shape_string(),
                                      outputs.shape_string()));
  if (outputs.dtype() != DType::f32 || (grad && grad->dtype() != DType::f32))
    throw ValidationError("mse: outputs and gradient must be f32 tensors");
  if (!targets.buffer) throw ValidationError("mse: no targets");
  if (targets.buffer->bytes() / sizeof(float) < targets.offset ||
      targets.buffer->bytes() / sizeof(float) - targets.offset < outputs.size())
    throw ValidationError(
        fmt::format("mse: the targets buffer holds fewer than the {} values outputs {} need", outputs.size(),
                    outputs.shape_string()));
  if (metrics.bytes() < (slot + 1) * 2 * sizeof(float))
    throw ValidationError(fmt::format("mse: metrics slot {} beyond the buffer", slot));
  using detail::u32;
  const cl_mem g = grad ? grad->mem() : outputs.mem();  // never written when with_grad == 0
  detail::set_args(kernel_->kernel, outputs.mem(), u32(outputs.offset(), "offset"), targets.buffer->mem(),
                   u32(targets.offset, "offset"), g, u32(grad ? grad->offset() : 0, "offset"),
                   u32(outputs.rows(), "rows"), u32(outputs.cols(), "outputs"), cl_float(grad_scale),
                   cl_int(grad != nullptr), metrics.mem(), u32(slot, "slot"));
  detail::launch_1d(rt_, kernel_->kernel, kernel_->work_group, kernel_->work_group);
}

}  // namespace anycl
