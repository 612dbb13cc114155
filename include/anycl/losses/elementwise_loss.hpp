// Losses of one output against its target, each as Keras defines it (per row the mean over outputs):
// mean absolute error ("mae"), Huber with delta 1 ("huber") and binary cross-entropy from logits
// ("binary_crossentropy": sigmoid outputs, binary or multi-label). Fused kernel:
// cl_kernels/elementwise_loss.cl.
#pragma once

#include <memory>

#include "anycl/losses/loss.hpp"

namespace anycl {

class ElementwiseLoss final : public Loss {
 public:
  /// `name`: "mae", "huber" or "binary_crossentropy" (ValidationError otherwise); fetches the kernels once.
  ElementwiseLoss(Runtime& rt, const std::string& name);
  ~ElementwiseLoss() override;
  /// The Loss interface (loss.hpp): f32 targets of the output width (0/1 per output for binary
  /// cross-entropy); metric: Σ_rows mean |y − t| ("mae"), or Σ_rows mean [(z > 0) == t] ("accuracy",
  /// Keras' binary accuracy at threshold 0.5). grad = ∂loss/∂y / width · grad_scale.
  std::string name() const override { return name_; }
  DType target_dtype() const override { return DType::f32; }
  size_t target_width(size_t outputs) const override { return outputs; }
  std::string metric_name() const override;
  bool predicts_classes() const override;
  void run(const Tensor& outputs, TargetsView targets, Tensor* grad, float grad_scale, DeviceBuffer& metrics,
           size_t slot) override;
  /// Binary cross-entropy: out = sigmoid(outputs) element-wise; the others throw (loss.hpp).
  void predictions(const Tensor& outputs, Tensor& out) override;

 private:
  struct Kernels;  // the compiled kernels and the loss kernel's work-group size (elementwise_loss.cpp)
  Runtime& rt_;
  std::string name_;
  int kind_ = 0;
  std::unique_ptr<Kernels> kernels_;
};

}  // namespace anycl
