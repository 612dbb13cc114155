// Dropout layer: inverted dropout while training (a new counter-based mask every step),
// identity at evaluation.
#pragma once

#include <memory>

#include "anycl/nn/layer.hpp"
#include "anycl/nn/registry.hpp"

namespace anycl {

class DropoutOp;     // src/ops/dropout.hpp
struct DropoutMask;  // src/ops/dropout.hpp

class Dropout final : public Layer {
 public:
  /// rate in [0, 1).
  explicit Dropout(float rate);
  ~Dropout() override;
  /// The drop rate.
  float rate() const noexcept { return rate_; }
  /// The Layer interface (layer.hpp); no parameters, identity when not training.
  const LayerType& type() const override;
  std::string args() const override;
  Shape output_shape(const Shape& input) const override { return input; }
  using Layer::parameter_count;
  size_t parameter_count(const Shape&) const override { return 0; }
  size_t activation_floats(const Shape& input) const override {  // y, and the mask at a byte each
    return rate_ > 0.f ? shape_size(input) + (shape_size(input) + 3) / 4 : 0;
  }
  void build(Runtime& rt, const Shape& input, size_t max_batch, Tensor params, Tensor grads,
             uint32_t index) override;
  Tensor forward(const Tensor& x, const StepContext& ctx) override;
  Tensor backward(Tensor& dy, const StepContext& ctx, bool need_dx) override;

  /// Fused into the Dense layer before it (Sequential::build links them): in a training step that
  /// layer's output stage runs y = act(y + bias) and this layer's mask in one launch, and its backward
  /// applies this layer's mask with the activation's gradient — two launches fewer a step.
  /// forward_fused: run by that Dense; false when this layer does nothing this step (rate 0, not
  /// training), then the Dense runs its own stage and this layer's forward is the identity.
  bool forward_fused(Tensor& y, const Tensor& bias, Activation act, const StepContext& ctx);
  /// In that Dense's backward: the mask this layer's backward left for it to apply (true, once), or
  /// false when this layer's backward applied it itself.
  bool take_fused_mask(size_t rows, const DeviceBuffer*& keep, float& scale);

 private:
  friend class Sequential;
  DropoutMask mask(const StepContext& ctx) const;
  bool same_step(const StepContext& ctx, size_t rows) const;

  float rate_;
  uint32_t index_ = 0;
  Tensor y_;
  DeviceBuffer keep_;  // the last training forward's mask, a byte per element, for its backward
  struct Kept {
    bool valid = false;
    uint64_t seed = 0;
    uint32_t step = 0, row_base = 0;
    size_t rows = 0;
  } kept_;              // which forward stored keep_
  bool fused_ = false;  // the Dense before it runs this layer's mask (Sequential::build)
  struct FusedForward {
    bool pending = false;
    cl_mem x = nullptr;
    size_t x_offset = 0;
  } fused_forward_;             // the output the Dense's fused stage wrote, not yet returned by forward()
  bool mask_deferred_ = false;  // backward() left the mask to the Dense's backward
  std::unique_ptr<DropoutOp> op_;
};

/// The registry entry of Dropout: "dropout RATE"; `--layers` token "dropoutRATE" (e.g. dropout0.25);
/// an identity in ONNX.
const LayerType& dropout_layer_type();

}  // namespace anycl
