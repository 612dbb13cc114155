// BatchNormalization (Keras' layer): per feature after Dense, per channel of NCHW after Conv2D.
// Training normalises with the batch's mean and biased variance and folds them into the moving
// statistics; evaluation and prediction use the moving ones. γ, β are trainable parameters; the
// moving mean and variance are the layer's non-trainable state (Layer::state_count). An activation
// of its own (Keras' Conv2D → BatchNormalization → ReLU) is fused into the normalisation.
#pragma once

#include <memory>

#include "anycl/nn/activation.hpp"
#include "anycl/nn/layer.hpp"
#include "anycl/nn/registry.hpp"

namespace anycl {

class BatchNormOp;  // src/ops/batchnorm.hpp
class MaxPool2D;

class BatchNormalization final : public Layer {
 public:
  /// Keras' defaults: momentum 0.99 in [0, 1], epsilon 0.001 > 0; `activation` applied after the
  /// normalisation, y = act(γ·x̂ + β) (linear: none, as Keras' layer).
  explicit BatchNormalization(float momentum = 0.99f, float epsilon = 0.001f,
                              Activation activation = Activation::linear);
  ~BatchNormalization() override;
  float momentum() const noexcept { return momentum_; }
  float epsilon() const noexcept { return epsilon_; }
  Activation activation() const noexcept { return activation_; }
  /// Channels (C of (C, H, W), or the features of a flat input) of an input shape.
  static size_t channels(const Shape& input);

  /// The Layer interface (layer.hpp): γ then β (C each) as parameters; moving mean then moving
  /// variance (C each) as state.
  const LayerType& type() const override;
  std::string args() const override;
  std::string summary_note() const override;
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
  /// Whether this built layer's backward takes the gradient of `pool` right after it and routes it
  /// itself (BatchNormOp::backward_pooled): non-overlapping windows of at least 2, images of at least 8
  /// values a plane, on the row forms' drivers (PoCL's CPU driver). Sequential links such a pair; the
  /// layer then recognises the pool's gradient by its shape.
  bool takes_pool_gradient(const MaxPool2D& pool) const;
  /// Whether Sequential linked a MaxPool2D after this layer: forward_pooled() then pools in this layer's
  /// pass (batchnorm.cl's batchnorm_forward_rows_pooled).
  bool pools_in_forward() const { return pool_after_ != nullptr; }
  /// This layer's forward pass and that of the MaxPool2D linked after it, in one pass that writes only the
  /// pool's output (its tensor) and argmax, not this layer's output. Only where pools_in_forward().
  Tensor forward_pooled(const Tensor& x, const StepContext& ctx);

 private:
  friend class Sequential;  // links a MaxPool2D after it (pool_after_)
  float momentum_, epsilon_;
  Activation activation_;
  size_t channels_ = 0, plane_ = 1;
  Tensor params_, grads_, state_, stats_, y_, x_;
  std::unique_ptr<BatchNormOp> op_;
  MaxPool2D* pool_after_ = nullptr;  // the MaxPool2D right after it, whose backward this layer's runs
};

/// The registry entry: "batchnorm MOMENTUM EPSILON [ACTIVATION]" (the activation written only when
/// not linear, so older files read the same); `--layers` tokens "bn" (Keras' defaults), "bnMOMENTUM"
/// and "bnMOMENTUM_EPSILON" (e.g. bn0.9_1e-05), each with ":ACTIVATION" for its own (bn:relu; plain
/// bn is linear, whatever --activation says); ONNX BatchNormalization with the moving statistics,
/// then the activation's node.
const LayerType& batchnorm_layer_type();

}  // namespace anycl
