// Softmax + cross-entropy + gradient in one kernel, with the batch's loss sum and number of
// correct predictions written to a device-side metrics slot (cl_kernels/softmax_xent.cl), so
// the host reads metrics only when it wants to show them.
#pragma once

#include "anycl/losses/targets_view.hpp"
#include "anycl/tensor.hpp"
#include "runtime/runtime_impl.hpp"

namespace anycl {

class SoftmaxCrossEntropy {
 public:
  /// Fetches the kernels once, with a work-group size the device allows.
  explicit SoftmaxCrossEntropy(Runtime& rt);
  /// For logits:(rows,classes): metrics[2·slot] = Σ_rows −log softmax(z)[label],
  /// metrics[2·slot+1] = number of rows whose argmax is the label; when `dlogits` is given,
  /// dlogits = (softmax(z) − onehot(label))·grad_scale (grad_scale = 1/batch for a mean loss).
  /// One launch up to 4·(work-group size) rows (1024 on most devices), two beyond, deterministic.
  void run(const Tensor& logits, LabelsView labels, Tensor* dlogits, float grad_scale, DeviceBuffer& metrics,
           size_t slot);
  /// probs = softmax(logits) row-wise.  logits,probs:(rows,classes)
  void probabilities(const Tensor& logits, Tensor& probs);

 private:
  static constexpr size_t kRowsPerItem = 4;  // rows per work-item before the batch takes more groups
  Runtime& rt_;
  size_t work_group_;
  compute::kernel kernel_, softmax_, sum_;
  DeviceBuffer partials_;  // per-group sums of a batch that takes several groups
};

}  // namespace anycl
