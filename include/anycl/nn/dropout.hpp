// Dropout layer: inverted dropout while training (a new counter-based mask every step),
// identity at evaluation.
#pragma once

#include <memory>

#include "anycl/nn/layer.hpp"
#include "anycl/ops/dropout.hpp"

namespace anycl {

class Dropout final : public Layer {
 public:
  /// rate in [0, 1).
  explicit Dropout(float rate);
  /// The Layer interface (layer.hpp); no parameters, identity when not training.
  std::string kind() const override { return "Dropout"; }
  LayerSpec spec() const override;
  size_t output_features(size_t input_features) const override { return input_features; }
  size_t parameter_count(size_t) const override { return 0; }
  void build(Runtime& rt, size_t input_features, size_t max_batch, Tensor params, Tensor grads,
             uint32_t index) override;
  Tensor forward(const Tensor& x, const StepContext& ctx) override;
  Tensor backward(Tensor& dy, const StepContext& ctx, bool need_dx) override;

 private:
  DropoutMask mask(const StepContext& ctx) const;

  float rate_;
  uint32_t index_ = 0;
  Tensor y_;
  std::unique_ptr<DropoutOp> op_;
};

}  // namespace anycl
