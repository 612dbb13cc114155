// AveragePooling2D over NCHW images (valid windows, as Keras' default): each output is the mean of a
// size×size window; the backward spreads each output's gradient evenly over its window.
#pragma once

#include <memory>

#include "anycl/nn/geometry.hpp"
#include "anycl/nn/layer.hpp"
#include "anycl/nn/registry.hpp"

namespace anycl {

class AvgPoolOp;  // src/ops/pool.hpp

class AvgPool2D final : public Layer {
 public:
  /// A size×size window moved by `stride` (Keras: stride = size).
  explicit AvgPool2D(size_t size, size_t stride);
  ~AvgPool2D() override;
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
  size_t size_, stride_;
  PoolGeometry g_;
  Tensor y_, dx_;  // (max_batch, C, OH, OW), (max_batch, C, H, W)
  std::unique_ptr<AvgPoolOp> op_;
};

/// The registry entry: "avgpool2d SIZE STRIDE"; `--layers` tokens avgpoolN (stride N) and avgpoolNsS;
/// ONNX AveragePool.
const LayerType& avgpool2d_layer_type();

}  // namespace anycl
