// Launcher for cl_kernels/softmax_xent.cl: one work-group whose size fits the device.
#include "anycl/ops/softmax_xent.hpp"

#include "anycl/error.hpp"
#include "kernel_call.hpp"

namespace anycl {
namespace {

// The kernel's one work-group has WG work-items (a power of two: its reduction halves it) and
// 2·WG floats of local memory; reqd_work_group_size fixes WG at compile time. Start from what the
// device allows, then ask the compiled kernel (CL_KERNEL_WORK_GROUP_SIZE may be lower) and
// rebuild smaller until it fits.
compute::kernel build_softmax_xent(Runtime& rt, size_t& work_group) {
  const DeviceInfo& info = rt.info();
  work_group = 256;
  while (work_group > 1 &&
         (work_group > info.max_work_group_size || 2 * work_group * sizeof(float) > info.local_mem_bytes))
    work_group /= 2;
  for (;;) {
    const std::string options = work_group == 256 ? "" : fmt::format("-DWG={}", work_group);
    cl_int status = CL_SUCCESS;
    cl_kernel k = clCreateKernel(rt.program("softmax_xent", options).get(), "softmax_xent", &status);
    detail::check_cl(status, "clCreateKernel", "softmax_xent");
    compute::kernel kernel(k, false);
    const size_t fits = detail::kernel_work_group_size(rt, kernel);
    if (work_group <= fits || work_group == 1) return kernel;
    while (work_group > fits && work_group > 1) work_group /= 2;
  }
}

}  // namespace

SoftmaxCrossEntropy::SoftmaxCrossEntropy(Runtime& rt) : rt_(rt), work_group_(0) {
  kernel_ = build_softmax_xent(rt, work_group_);
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
                              compute::buffer& metrics, size_t slot) {
  if (dlogits && dlogits->shape() != logits.shape())
    throw ValidationError(fmt::format("softmax_xent: dlogits {} differs from logits {}",
                                      dlogits->shape_string(), logits.shape_string()));
  if (!labels.buffer) throw ValidationError("softmax_xent: no labels");
  if (metrics.size() < (slot + 1) * 2 * sizeof(float))
    throw ValidationError(fmt::format("softmax_xent: metrics slot {} beyond the buffer", slot));
  using detail::u32;
  const cl_mem grad = dlogits ? dlogits->mem() : logits.mem();  // never written when with_grad == 0
  detail::set_args(kernel_, logits.mem(), u32(logits.offset(), "offset"), labels.buffer->get(),
                   u32(labels.offset, "offset"), grad, u32(dlogits ? dlogits->offset() : 0, "offset"),
                   u32(logits.rows(), "rows"), u32(logits.cols(), "classes"), cl_float(grad_scale),
                   cl_int(dlogits != nullptr), metrics.get(), u32(slot, "slot"));
  detail::launch_1d(rt_, kernel_, work_group_, work_group_);
}

}  // namespace anycl
