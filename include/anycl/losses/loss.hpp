// The loss interface: a fused device kernel computing the loss, its gradient and a metric in one
// launch into a device metrics slot, plus what targets it needs. make_loss() is the one list.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "anycl/dtype.hpp"
#include "anycl/losses/targets_view.hpp"
#include "anycl/tensor.hpp"

namespace anycl {

class Loss {
 public:
  virtual ~Loss() = default;
  /// The make_loss() name: "softmax_cross_entropy" or "mse".
  virtual std::string name() const = 0;
  /// Element type of the targets: i32 (a class index per row) or f32 (values).
  virtual DType target_dtype() const = 0;
  /// Target elements per row for a model with `outputs` outputs (1 for a class index).
  virtual size_t target_width(size_t outputs) const = 0;
  /// The metric reported beside the loss: "accuracy" (classes) or "mae" (regression).
  virtual std::string metric_name() const = 0;
  /// Whether predictions are class probabilities (softmax of the outputs) or the raw outputs.
  virtual bool predicts_classes() const = 0;
  /// For outputs:(rows,width) and their targets: metrics[2·slot] = Σ_rows loss of the row,
  /// metrics[2·slot+1] = Σ_rows metric of the row (a correct prediction counts 1); when `grad` is
  /// given (same shape as outputs), grad = ∂(Σ_rows loss)/∂outputs · grad_scale. One launch, no wait.
  virtual void run(const Tensor& outputs, TargetsView targets, Tensor* grad, float grad_scale,
                   DeviceBuffer& metrics, size_t slot) = 0;
};

/// The loss named `name` ("softmax_cross_entropy" or "mse") with its kernels fetched on `rt`.
std::unique_ptr<Loss> make_loss(Runtime& rt, const std::string& name);
/// Every name make_loss() knows.
const std::vector<std::string>& loss_names();
/// ValidationError listing the known names when `name` is not one of them.
void check_loss_name(const std::string& name);

}  // namespace anycl
