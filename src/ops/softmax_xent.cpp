// Launcher for cl_kernels/softmax_xent.cl: one work-group whose size fits the device.
#include "anycl/ops/softmax_xent.hpp"

#include "anycl/error.hpp"
#include "kernel_call.hpp"

namespace anycl {
SoftmaxCrossEntropy::SoftmaxCrossEntropy(Runtime& rt) : rt_(rt), work_group_(0) {
  // One work-group with 2·WG floats of local memory (loss and correct-count partial sums).
  kernel_ = detail::single_group_kernel(rt, "softmax_xent", "softmax_xent", 2, work_group_);
  softmax_ = rt.kernel("softmax_xent", "softmax_forward");
}

void SoftmaxCrossEntropy::probabilities(const Tensor& logits, Tensor& probs) {
  if (probs.shape() != logits.shape())
    throw ValidationError(
        fmt::format("softmax: probs {} differs from logits {}", probs.shape_string(), logits.shape_string()));
  using detail::u32;
  detail::set_args(softmax_, logits.mem(), u32(logits.offset(), "offset"), probs.mem(),
                   u32(probs.offset(), "offset"), u32(logits.rows(), "rows"), u32(logits.cols(), "classes"));
  detail::launch_1d(rt_, softmax_, logits.rows(), 32);
}

void SoftmaxCrossEntropy::run(const Tensor& logits, LabelsView labels, Tensor* dlogits, float grad_scale,
                              DeviceBuffer& metrics, size_t slot) {
  if (dlogits && dlogits->shape() != logits.shape())
    throw ValidationError(fmt::format("softmax_xent: dlogits {} differs from logits {}",
                                      dlogits->shape_string(), logits.shape_string()));
  if (!labels.buffer) throw ValidationError("softmax_xent: no labels");
  if (metrics.bytes() < (slot + 1) * 2 * sizeof(float))
    throw ValidationError(fmt::format("softmax_xent: metrics slot {} beyond the buffer", slot));
  using detail::u32;
  const cl_mem grad = dlogits ? dlogits->mem() : logits.mem();  // never written when with_grad == 0
  detail::set_args(kernel_, logits.mem(), u32(logits.offset(), "offset"), labels.buffer->mem(),
                   u32(labels.offset, "offset"), grad, u32(dlogits ? dlogits->offset() : 0, "offset"),
                   u32(logits.rows(), "rows"), u32(logits.cols(), "classes"), cl_float(grad_scale),
                   cl_int(dlogits != nullptr), metrics.mem(), u32(slot, "slot"));
  detail::launch_1d(rt_, kernel_, work_group_, work_group_);
}

}  // namespace anycl
