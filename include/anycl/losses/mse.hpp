// Mean squared error over float targets (regression), as Keras defines it: per row the mean over
// outputs of (y − t)²; the metric is the mean absolute error. Fused kernel: cl_kernels/mse.cl.
#pragma once

#include <memory>

#include "anycl/losses/loss.hpp"

namespace anycl {

class MeanSquaredError final : public Loss {
 public:
  /// Fetches the kernel once, with a work-group size the device allows.
  explicit MeanSquaredError(Runtime& rt);
  ~MeanSquaredError() override;
  /// The Loss interface (loss.hpp): f32 targets of the output width; metric: Σ_rows mean |y − t|.
  /// grad = 2(y − t)/width · grad_scale.
  std::string name() const override { return "mse"; }
  DType target_dtype() const override { return DType::f32; }
  size_t target_width(size_t outputs) const override { return outputs; }
  std::string metric_name() const override { return "mae"; }
  bool predicts_classes() const override { return false; }
  void run(const Tensor& outputs, TargetsView targets, Tensor* grad, float grad_scale, DeviceBuffer& metrics,
           size_t slot) override;

 private:
  struct Kernel;  // the compiled kernel and its work-group size (mse.cpp)
  Runtime& rt_;
  std::unique_ptr<Kernel> kernel_;
};

}  // namespace anycl
