// Dense: y = act(x·W + b) with a CLBlast GEMM and the fused bias+activation kernel.
// W is stored (in, out) row-major, as Keras stores its kernel.
#pragma once

#include <memory>

#include "anycl/nn/layer.hpp"

namespace anycl {

class Dense final : public Layer {
 public:
  /// A layer of `units` outputs with the activation fused into its bias kernel.
  Dense(size_t units, Activation activation = Activation::linear, Init init = Init::glorot_uniform);
  /// The Layer interface (layer.hpp); Dense holds W:(in,units) then b:(units).
  std::string kind() const override { return "Dense"; }
  LayerSpec spec() const override;
  size_t output_features(size_t) const override { return units_; }
  size_t parameter_count(size_t input_features) const override { return input_features * units_ + units_; }
  void build(Runtime& rt, size_t input_features, size_t max_batch, Tensor params, Tensor grads,
             uint32_t index) override;
  void initialize(uint64_t seed) override;
  Tensor forward(const Tensor& x, const StepContext& ctx) override;
  Tensor backward(Tensor& dy, const StepContext& ctx, bool need_dx) override;

 private:
  size_t units_, in_ = 0;
  Activation activation_;
  Init init_;
  uint32_t index_ = 0;
  Tensor w_, b_, dw_, db_;  // views into the model's flat buffers
  Tensor y_, dx_;           // (max_batch, units), (max_batch, in)
  Tensor wt_;               // (units, in): Wᵀ for dx = dz·Wᵀ as a GEMM NN
  Tensor x_last_, y_last_;  // what the last forward saw and produced (views)
  std::unique_ptr<BiasActivation> bias_act_;
};

}  // namespace anycl
