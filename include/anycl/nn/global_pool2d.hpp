// GlobalAveragePooling2D and GlobalMaxPooling2D over NCHW images: one value per channel, the mean or
// the maximum of its whole H×W plane; the output is flat (C), as Keras' (batch, channels).
#pragma once

#include <memory>

#include "anycl/nn/layer.hpp"
#include "anycl/nn/registry.hpp"

namespace anycl {

class GlobalPoolOp;  // src/ops/pool.hpp

class GlobalPool2D final : public Layer {
 public:
  /// `max`: GlobalMaxPooling2D (the backward routes the gradient to each plane's first maximum);
  /// else GlobalAveragePooling2D (the backward spreads it evenly).
  explicit GlobalPool2D(bool max);
  ~GlobalPool2D() override;
  bool is_max() const noexcept { return max_; }

  /// The Layer interface (layer.hpp); no parameters. ValidationError for an input that is not (C, H, W).
  const LayerType& type() const override;
  std::string args() const override { return {}; }
  Shape output_shape(const Shape& input) const override;
  using Layer::parameter_count;
  size_t parameter_count(const Shape&) const override { return 0; }
  size_t activation_floats(const Shape& input) const override;
  void build(Runtime& rt, const Shape& input, size_t max_batch, Tensor params, Tensor grads,
             uint32_t index) override;
  Tensor forward(const Tensor& x, const StepContext& ctx) override;
  Tensor backward(Tensor& dy, const StepContext& ctx, bool need_dx) override;

 private:
  bool max_;
  Shape input_;
  Tensor y_, arg_, dx_;  // (max_batch, C) f32 and i32, (max_batch, C, H, W)
  std::unique_ptr<GlobalPoolOp> op_;
};

/// The registry entries: "globalavgpool2d" and "globalmaxpool2d" (no arguments); `--layers` tokens
/// globalavgpool and globalmaxpool; ONNX GlobalAveragePool / GlobalMaxPool then Flatten.
const LayerType& globalavgpool2d_layer_type();
const LayerType& globalmaxpool2d_layer_type();

}  // namespace anycl
