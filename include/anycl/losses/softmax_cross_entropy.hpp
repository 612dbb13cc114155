// Softmax cross-entropy over class indices as a Loss (the fused softmax_xent kernel); the metric
// is accuracy, and prediction applies the softmax.
#pragma once

#include <memory>

#include "anycl/losses/loss.hpp"

namespace anycl {

class SoftmaxCrossEntropy;  // src/ops/softmax_xent.hpp

class SoftmaxCrossEntropyLoss final : public Loss {
 public:
  /// Fetches the kernel once.
  explicit SoftmaxCrossEntropyLoss(Runtime& rt);
  ~SoftmaxCrossEntropyLoss() override;
  /// The Loss interface (loss.hpp): i32 class index per row; metric: correct predictions.
  std::string name() const override { return "softmax_cross_entropy"; }
  DType target_dtype() const override { return DType::i32; }
  size_t target_width(size_t) const override { return 1; }
  std::string metric_name() const override { return "accuracy"; }
  bool predicts_classes() const override { return true; }
  void run(const Tensor& outputs, TargetsView targets, Tensor* grad, float grad_scale, DeviceBuffer& metrics,
           size_t slot) override;
  /// probs = softmax(logits) row-wise (prediction).
  void probabilities(const Tensor& logits, Tensor& probs);
  /// The Loss interface's name for probabilities().
  void predictions(const Tensor& outputs, Tensor& out) override { probabilities(outputs, out); }

 private:
  std::unique_ptr<SoftmaxCrossEntropy> op_;
};

}  // namespace anycl
