// MaxPool2D over NCHW images (valid windows, as Keras' default): each output is the maximum of a
// size×size window; the backward routes the gradient to where that maximum was.
#pragma once

#include <memory>

#include "anycl/nn/geometry.hpp"
#include "anycl/nn/layer.hpp"
#include "anycl/nn/registry.hpp"

namespace anycl {

class MaxPoolOp;  // src/ops/pool.hpp

class MaxPool2D final : public Layer {
 public:
  /// A size×size window moved by `stride` (Keras: stride = size).
  explicit MaxPool2D(size_t size, size_t stride);
  ~MaxPool2D() override;
  size_t size() const noexcept { return size_; }
  size_t stride() const noexcept { return stride_; }
  /// The geometry for a (C, H, W) input; ValidationError when it is not an image or is smaller than a window.
  PoolGeometry geometry(const Shape& input) const;

  /// The Layer interface (layer.hpp); no parameters.
  const LayerType& type() const override;
  std::string args() const override;
  Shape output_shape(const Shape& input) const override;
  using Layer::parameter_count;
  size_t parameter_count(const Shape&) const override { return 0; }
  size_t activation_floats(const Shape& input) const override;
  void build(Runtime& rt, const Shape& input, size_t max_batch, Tensor params, Tensor grads,
             uint32_t index) override;
  Tensor forward(const Tensor& x, const StepContext& ctx) override;
  Tensor backward(Tensor& dy, const StepContext& ctx, bool need_dx) override;

 private:
  friend class Sequential;          // fuses its backward into the Conv2D or BatchNormalization before it
  friend class Conv2D;              // which reads y_, arg_ and g_ then
  friend class BatchNormalization;  // which reads arg_ and g_ and writes dx_ then
  size_t size_, stride_;
  // The Conv2D or BatchNormalization before it routes this layer's gradient (Sequential::build links them):
  // Sequential::backward does not call this layer's backward, and hands its dy to that layer.
  bool fused_ = false;
  PoolGeometry g_;
  Tensor y_, arg_, dx_;  // (max_batch, C, OH, OW) f32 and i32, (max_batch, C, H, W)
  std::unique_ptr<MaxPoolOp> op_;
};

/// The registry entry: "maxpool2d SIZE STRIDE"; `--layers` tokens poolN (stride N) and poolNsS; ONNX MaxPool.
const LayerType& maxpool2d_layer_type();

}  // namespace anycl
