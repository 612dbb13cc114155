// Dense: y = act(x·W + b) with a CLBlast GEMM and the fused bias+activation kernel.
// W is stored (in, out) row-major, as Keras stores its kernel.
#pragma once

#include <memory>

#include "anycl/nn/layer.hpp"
#include "anycl/nn/registry.hpp"

namespace anycl {

class BiasActivation;  // src/ops/activation.hpp
class Dropout;         // anycl/nn/dropout.hpp
class BlockTranspose;  // src/ops/transpose.hpp
class ConvOps;         // src/ops/conv.hpp (its ordered sum of slices, for a forward split over k)

class Dense final : public Layer {
 public:
  /// A layer of `units` outputs with the activation fused into its bias kernel.
  Dense(size_t units, Activation activation = Activation::linear, Init init = Init::glorot_uniform);
  ~Dense() override;
  /// Its configuration.
  size_t units() const noexcept { return units_; }
  Activation activation() const noexcept { return activation_; }
  Init init() const noexcept { return init_; }
  /// The Layer interface (layer.hpp) over flat inputs; Dense holds W:(in,units) then b:(units).
  const LayerType& type() const override;
  std::string args() const override;
  std::string summary_note() const override;
  Shape output_shape(const Shape& input) const override;
  using Layer::parameter_count;
  size_t parameter_count(const Shape& input) const override;
  size_t activation_floats(const Shape& input) const override;
  bool can_be_output() const override { return true; }
  std::vector<GemmShape> gemm_shapes(const Shape& input, size_t batch, bool need_dx,
                                     Runtime* rt) const override;
  void build(Runtime& rt, const Shape& input, size_t max_batch, Tensor params, Tensor grads,
             uint32_t index) override;
  void initialize(uint64_t seed) override;
  Tensor forward(const Tensor& x, const StepContext& ctx) override;
  Tensor backward(Tensor& dy, const StepContext& ctx, bool need_dx) override;

 private:
  friend class Sequential;  // links a Dropout after it (dropout_after_)
  void forward_split(const Tensor& xt, Tensor& y, size_t slices);
  void forward_split_turned(const Tensor& x, Tensor& y, size_t slices, size_t padded);
  size_t units_, in_ = 0, max_batch_ = 0;
  Activation activation_;
  Init init_;
  uint32_t index_ = 0;
  Tensor w_, b_, dw_, db_;  // views into the model's flat buffers
  Tensor y_, dx_;           // (max_batch, units), (max_batch, in)
  Tensor wt_;               // (units, in): Wᵀ for dx = dz·Wᵀ as a GEMM NN or TN
  Tensor dwt_;              // (units, in): dWᵀ where dW runs turned round (detail::dense_dw_turned)
  Tensor xt_, dzt_;  // (in·max_batch), (units·max_batch): xᵀ and dzᵀ where CLBlast reads A transposed
  Tensor x_last_, y_last_;  // what the last forward saw and produced (views)
  Tensor parts_;            // a forward split over k: each slice's (batch, units), summed in order
  Tensor xt_padded_;        // xᵀ with its rows padded, for a split turned round (forward_split_turned)
  Tensor z_, z_last_;       // gelu only (activation_keeps_input): (max_batch, units) before the activation
  std::unique_ptr<BiasActivation> bias_act_;
  std::unique_ptr<BlockTranspose> transposer_;
  std::unique_ptr<ConvOps> slice_sum_;  // made on the first split forward
  Dropout* dropout_after_ = nullptr;    // the Dropout right after it, whose mask its output stage runs
};

/// The registry entry of Dense: "dense UNITS ACTIVATION INIT"; a `--layers` token of digits is a
/// hidden Dense of that many units (with the flags' activation, init and dropout); ONNX Gemm (+ act).
const LayerType& dense_layer_type();

}  // namespace anycl
