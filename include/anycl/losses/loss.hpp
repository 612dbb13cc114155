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
  /// The make_loss() name ("softmax_cross_entropy", "mse", "mae", "huber", "binary_crossentropy").
  virtual std::string name() const = 0;
  /// Element type of the targets: i32 (a class index per row) or f32 (values).
  virtual DType target_dtype() const = 0;
  /// Target elements per row for a model with `outputs` outputs (1 for a class index).
  virtual size_t target_width(size_t outputs) const = 0;
  /// The metric reported beside the loss: "accuracy" (classes) or "mae" (regression).
  virtual std::string metric_name() const = 0;
  /// Whether predictions are class probabilities (softmax, or the sigmoid of each output for binary
  /// cross-entropy) or the raw outputs.
  virtual bool predicts_classes() const = 0;
  /// out = the predictions for `outputs` (same shape) when predicts_classes(): softmax or sigmoid
  /// probabilities. A loss whose predictions are the raw outputs throws ValidationError. No wait.
  virtual void predictions(const Tensor& outputs, Tensor& out);
  /// For outputs:(rows,width) and their targets: metrics[2·slot] = Σ_rows loss of the row,
  /// metrics[2·slot+1] = Σ_rows metric of the row (a correct prediction counts 1); when `grad` is
  /// given (same shape as outputs), grad = ∂(Σ_rows loss)/∂outputs · grad_scale. One launch, no wait.
  virtual void run(const Tensor& outputs, TargetsView targets, Tensor* grad, float grad_scale,
                   DeviceBuffer& metrics, size_t slot) = 0;
};

/// What the host knows of a loss without a device: its targets, metric and predictions (the same
/// answers as the Loss's own, for checks and messages before a model is built).
struct LossInfo {
  std::string name;    // the make_loss() name
  bool class_targets;  // one class index (i32) per row; else f32 targets, one per output
  std::string metric;  // "accuracy" or "mae"
  bool probabilities;  // predictions are probabilities (softmax or sigmoid), else the raw outputs
};

/// The LossInfo of the loss named `name` (ValidationError listing the known names otherwise).
const LossInfo& loss_info(const std::string& name);
/// The loss named `name` (one of loss_names()) with its kernels fetched on `rt`.
std::unique_ptr<Loss> make_loss(Runtime& rt, const std::string& name);
/// Every name make_loss() knows.
const std::vector<std::string>& loss_names();
/// ValidationError listing the known names when `name` is not one of them.
void check_loss_name(const std::string& name);

}  // namespace anycl
