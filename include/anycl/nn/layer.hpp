// The layer interface: a layer declares its per-sample input → output shape, parameter count and
// activation memory, and runs forward/backward over (batch, …) tensors whose parameters are
// slices of the model's flat parameter and gradient buffers. Layer types are listed in registry.hpp.
#pragma once

#include <cstdint>
#include <string>

#include "anycl/nn/activation.hpp"
#include "anycl/nn/init.hpp"
#include "anycl/nn/shape.hpp"
#include "anycl/tensor.hpp"

namespace anycl {

/// What a step needs to know beyond the data: training or evaluation, and the RNG position.
struct StepContext {
  bool training = false;
  uint64_t seed = 0;
  uint32_t step = 0;      // global training step (dropout draws a new mask each step)
  uint32_t row_base = 0;  // global sample position of row 0 (data-parallel shards)
};

/// A layer's architecture as a model file stores it: the registry name of its type and its
/// arguments in that type's own text form, e.g. {"dense", "512 relu glorot_uniform"}.
struct LayerSpec {
  std::string type;
  std::string args;
  /// "dense 512 relu glorot_uniform" (one line of a model file's architecture).
  std::string text() const { return args.empty() ? type : type + " " + args; }
  bool operator==(const LayerSpec& o) const { return type == o.type && args == o.args; }
  bool operator!=(const LayerSpec& o) const { return !(*this == o); }
};

struct LayerType;
struct GemmShape;  // blas/tuning.hpp

class Layer {
 public:
  virtual ~Layer() = default;
  /// This layer's registry entry (name, summary name, text forms, ONNX emission).
  virtual const LayerType& type() const = 0;
  /// Its arguments as the model file stores them after the type's name.
  virtual std::string args() const = 0;
  /// {type name, args()}: what a model file stores for this layer.
  LayerSpec spec() const;
  /// The type as Keras' summary names it ("Dense").
  std::string kind() const;
  /// Extra words for the summary's type column (", relu"), or "".
  virtual std::string summary_note() const { return {}; }

  /// Per-sample output shape for a per-sample input shape; ValidationError if it cannot take it.
  virtual Shape output_shape(const Shape& input) const = 0;
  /// Number of trainable parameters for that input shape (checked arithmetic).
  virtual size_t parameter_count(const Shape& input) const = 0;
  /// Non-trainable floats the layer keeps across steps and saves with the model (BatchNormalization's
  /// moving statistics): stored after every layer's parameters (Sequential::state()). None by default.
  virtual size_t state_count(const Shape& /*input*/) const { return 0; }
  /// Floats per sample that build() allocates (outputs, input gradients, masks).
  virtual size_t activation_floats(const Shape& input) const = 0;
  /// Floats of device scratch beyond those that the layer uses on `rt`'s device for batches of
  /// `batch` rows (a Conv2D's Winograd planes on a CPU), for Sequential's memory check. None by default.
  virtual size_t scratch_floats(const Shape& /*input*/, size_t /*batch*/, Runtime& /*rt*/) const { return 0; }
  /// Whether the layer can be a model's last layer (its outputs are the model's outputs).
  virtual bool can_be_output() const { return false; }
  /// The GEMMs one training step of this layer runs on `batch` rows on `rt`'s device, labelled "fwd",
  /// "dW" or "dX" (no dX when !need_dx), as training lays them out there (the layer need not be built),
  /// so `anycl tune` tunes the GEMMs training runs; a null `rt`: on no device in particular (every
  /// GEMM the layer can run, at the GEMM planner's defaults). None by default.
  virtual std::vector<GemmShape> gemm_shapes(const Shape& input, size_t batch, bool need_dx,
                                             Runtime* rt) const;
  /// Flat conveniences: output width and parameter count for `input_features` inputs.
  size_t output_features(size_t input_features) const { return shape_size(output_shape({input_features})); }
  size_t parameter_count(size_t input_features) const { return parameter_count(Shape{input_features}); }

  /// Allocates buffers for up to `max_batch` samples of `input`; `params`/`grads` are this layer's
  /// slices of the flat buffers (parameter_count elements each); `index` is its position.
  virtual void build(Runtime& rt, const Shape& input, size_t max_batch, Tensor params, Tensor grads,
                     uint32_t index) = 0;
  /// After build(), for a layer with state_count() > 0: its slice of the model's state buffer.
  virtual void bind_state(Tensor /*state*/) {}
  /// Fills the parameters (and state) from the counter-based RNG (no-op for layers without any).
  virtual void initialize(uint64_t /*seed*/) {}
  /// x:(batch,in…) → y:(batch,out…). The result stays valid until this layer's next forward.
  virtual Tensor forward(const Tensor& x, const StepContext& ctx) = 0;
  /// dy:(batch,out…), which may be overwritten → dx:(batch,in…) (empty when !need_dx).
  /// Accumulates nothing: this layer's gradient slice is overwritten.
  virtual Tensor backward(Tensor& dy, const StepContext& ctx, bool need_dx) = 0;
};

}  // namespace anycl
