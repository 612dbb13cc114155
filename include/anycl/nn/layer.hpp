// The layer interface: forward and backward over (batch, features) tensors, parameters living
// as slices of the model's flat parameter and gradient buffers.
#pragma once

#include <cstdint>
#include <string>

#include "anycl/ops/activation.hpp"
#include "anycl/ops/init.hpp"
#include "anycl/tensor.hpp"

namespace anycl {

/// What a step needs to know beyond the data: training or evaluation, and the RNG position.
struct StepContext {
  bool training = false;
  uint64_t seed = 0;
  uint32_t step = 0;      // global training step (dropout draws a new mask each step)
  uint32_t row_base = 0;  // global sample position of row 0 (data-parallel shards)
};

/// A layer's architecture, as stored in model files.
struct LayerSpec {
  enum class Kind { dense, dropout } kind = Kind::dense;
  size_t units = 0;                            // dense
  Activation activation = Activation::linear;  // dense
  Init init = Init::glorot_uniform;            // dense
  float rate = 0.f;                            // dropout
};

class Layer {
 public:
  virtual ~Layer() = default;
  /// "Dense" or "Dropout" (as Keras' summary names them).
  virtual std::string kind() const = 0;
  /// The architecture entry a model file stores for this layer.
  virtual LayerSpec spec() const = 0;
  /// Output width for inputs of `input_features`.
  virtual size_t output_features(size_t input_features) const = 0;
  /// Number of trainable parameters for inputs of `input_features`.
  virtual size_t parameter_count(size_t input_features) const = 0;
  /// Allocates buffers for up to `max_batch` rows; `params`/`grads` are this layer's slices of
  /// the flat buffers (parameter_count elements each); `index` is the layer's position.
  virtual void build(Runtime& rt, size_t input_features, size_t max_batch, Tensor params, Tensor grads,
                     uint32_t index) = 0;
  /// Fills the parameters from the counter-based RNG (no-op for layers without any).
  virtual void initialize(uint64_t /*seed*/) {}
  /// x:(batch,in) → y:(batch,out). The result stays valid until this layer's next forward.
  virtual Tensor forward(const Tensor& x, const StepContext& ctx) = 0;
  /// dy:(batch,out), which may be overwritten → dx:(batch,in) (empty when !need_dx).
  /// Accumulates nothing: this layer's gradient slice is overwritten.
  virtual Tensor backward(Tensor& dy, const StepContext& ctx, bool need_dx) = 0;
};

}  // namespace anycl
