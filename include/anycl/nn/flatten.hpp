// Flatten: (C, H, W) → (C·H·W), the bridge from convolutions to Dense layers. NCHW tensors are
// already contiguous in that order, so it only changes the shape (no copy, no kernel).
#pragma once

#include "anycl/nn/layer.hpp"
#include "anycl/nn/registry.hpp"

namespace anycl {

class Flatten final : public Layer {
 public:
  /// The Layer interface (layer.hpp); no parameters, no buffers.
  const LayerType& type() const override;
  std::string args() const override { return {}; }
  Shape output_shape(const Shape& input) const override { return {shape_size(input)}; }
  using Layer::parameter_count;
  size_t parameter_count(const Shape&) const override { return 0; }
  size_t activation_floats(const Shape&) const override { return 0; }
  void build(Runtime&, const Shape& input, size_t, Tensor, Tensor, uint32_t) override { input_ = input; }
  Tensor forward(const Tensor& x, const StepContext& ctx) override;
  Tensor backward(Tensor& dy, const StepContext& ctx, bool need_dx) override;

 private:
  Shape input_;
};

/// The registry entry: "flatten" (no arguments); `--layers` token flatten; ONNX Flatten (axis 1).
const LayerType& flatten_layer_type();

}  // namespace anycl
