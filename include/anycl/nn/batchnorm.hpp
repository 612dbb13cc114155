// BatchNormalization (Keras' layer): per feature after Dense, per channel of NCHW after Conv2D.
// Training normalises with the batch's mean and biased variance and folds them into the moving
// statistics; evaluation and prediction use the moving ones. γ, β are trainable parameters; the
// moving mean and variance are the layer's non-trainable state (Layer::state_count).
#pragma once

#include <memory>

#include "anycl/nn/layer.hpp"
#include "anycl/nn/registry.hpp"

namespace anycl {

class BatchNormOp;  // src/ops/batchnorm.hpp

class BatchNormalization final : public Layer {
 public:
  /// Keras' defaults: momentum 0.99 in [0, 1], epsilon 0.001 > 0.
  explicit BatchNormalization(float momentum = 0.99f, float epsilon = 0.001f);
  ~BatchNormalization() override;
  float momentum() const noexcept { return momentum_; }
  float epsilon() const noexcept { return epsilon_; }
  /// Channels (C of (C, H, W), or the features of a flat input) of an input shape.
  static size_t channels(const Shape& input);

  /// The Layer interface (layer.hpp): γ then β (C each) as parameters; moving mean then moving
  /// variance (C each) as state.
  const LayerType& type() const override;
  std::string args() const override;
  Shape output_shape(const Shape& input) const override;
  using Layer::parameter_count;
  size_t parameter_count(const Shape& input) const override { return 2 * channels(input); }
  size_t state_count(const Shape& input) const override { return 2 * channels(input); }
  size_t activation_floats(const Shape& input) const override { return shape_size(input); }
  void build(Runtime& rt, const Shape& input, size_t max_batch, Tensor params, Tensor grads,
             uint32_t index) override;
  void bind_state(Tensor state) override { state_ = std::move(state); }
  void initialize(uint64_t seed) override;
  Tensor forward(const Tensor& x, const StepContext& ctx) override;
  Tensor backward(Tensor& dy, const StepContext& ctx, bool need_dx) override;

 private:
  float momentum_, epsilon_;
  size_t channels_ = 0, plane_ = 1;
  Tensor params_, grads_, state_, stats_, y_, x_;
  std::unique_ptr<BatchNormOp> op_;
};

/// The registry entry: "batchnorm MOMENTUM EPSILON"; `--layers` tokens "bn" (Keras' defaults),
/// "bnMOMENTUM" and "bnMOMENTUM_EPSILON" (e.g. bn0.9_1e-05); ONNX BatchNormalization with the moving
/// statistics.
const LayerType& batchnorm_layer_type();

}  // namespace anycl
