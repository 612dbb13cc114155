// Launcher for cl_kernels/softmax_xent.cl: one work-group whose size fits the device.
#include "softmax_xent.hpp"

#include <algorithm>

#include "anycl/error.hpp"
#include "kernel_call.hpp"

namespace anycl {
SoftmaxCrossEntropy::SoftmaxCrossEntropy(Runtime& rt) : rt_(rt), work_group_(0) {
  // One work-group with 2·WG floats of local memory (loss and correct-count partial sums).
  kernel_ = detail::single_group_kernel(rt, "softmax_xent", "softmax_xent", 2, work_group_);
  softmax_ = detail::kernel(rt, "softmax_xent", "softmax_forward");
  sum_ = detail::kernel(rt, "softmax_xent", "softmax_xent_sum");
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
  // A training batch (up to kRowsPerItem·WG rows) is one work-group writing the slot: one launch.
  // A bigger batch is spread over groups of that many rows whose partial sums a second launch adds.
  const size_t rows = logits.rows(), rows_per_group = kRowsPerItem * work_group_;
  const size_t groups = std::max<size_t>(1, (rows + rows_per_group - 1) / rows_per_group);
  if (groups > 1 && partials_.bytes() < groups * 2 * sizeof(float))
    partials_ = DeviceBuffer(rt_, groups * 2 * sizeof(float), "softmax_xent partial sums");
  const cl_mem grad = dlogits ? dlogits->mem() : logits.mem();  // never written when with_grad == 0
  detail::set_args(kernel_, logits.mem(), u32(logits.offset(), "offset"), labels.buffer->mem(),
                   u32(labels.offset, "offset"), grad, u32(dlogits ? dlogits->offset() : 0, "offset"),
                   u32(rows, "rows"), u32(rows_per_group, "rows per group"), u32(logits.cols(), "classes"),
                   cl_float(grad_scale), cl_int(dlogits != nullptr),
                   groups > 1 ? partials_.mem() : metrics.mem(), u32(groups > 1 ? 0 : slot, "slot"));
  detail::launch_1d(rt_, kernel_, groups * work_group_, work_group_);
  if (groups == 1) return;
  detail::set_args(sum_, partials_.mem(), u32(groups, "groups"), metrics.mem(), u32(slot, "slot"));
  detail::launch_1d(rt_, sum_, 1, 1);
}

}  // namespace anycl
