// Sequential: a stack of layers over one flat parameter buffer and one flat gradient buffer,
// so an optimizer updates every layer in one launch. The output layer produces logits; the
// softmax is applied by the loss (training) or by predict().
//
//   anycl::Sequential model(784);
//   model.dense(512, Activation::relu).dropout(0.2f).dense(512, Activation::relu).dropout(0.2f).dense(10);
//   model.build(rt, 128);
//   model.initialize(seed);
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "anycl/nn/layer.hpp"
#include "anycl/nn/registry.hpp"

namespace anycl {

/// A model's architecture: what a model file stores besides the weights.
struct ModelSpec {
  size_t input_features = 0;
  Shape input_shape;              // per-sample (C, H, W) for images; empty: flat (input_features)
  std::vector<LayerSpec> layers;  // registry type names and arguments (registry.hpp)
  std::string loss = "softmax_cross_entropy";  // a make_loss() name (losses/loss.hpp)
};

class Sequential {
 public:
  /// An empty model taking `input_features` values per sample.
  explicit Sequential(size_t input_features);
  /// An empty model taking samples of `input_shape`: {features}, or {C, H, W} for images (NCHW).
  explicit Sequential(const Shape& input_shape);
  /// Builds the layers a spec describes (not yet on a device).
  explicit Sequential(const ModelSpec& spec);

  /// Appends a Dense layer. Returns *this for chaining.
  Sequential& dense(size_t units, Activation activation = Activation::linear,
                    Init init = Init::glorot_uniform);
  /// Appends a Dropout layer.
  Sequential& dropout(float rate);
  /// Appends a Conv2D (valid padding, stride 1 unless given), a MaxPool2D (stride = size) and a Flatten.
  Sequential& conv2d(size_t filters, size_t kernel, Activation activation = Activation::relu,
                     size_t stride = 1, bool same_padding = false);
  Sequential& max_pool2d(size_t size);
  Sequential& flatten();
  /// Appends any layer.
  Sequential& add(std::unique_ptr<Layer> layer);
  /// Appends the layer a spec describes (through the registry).
  Sequential& add(const LayerSpec& spec);
  /// The loss the model is trained with (a make_loss() name; ValidationError for an unknown one).
  Sequential& set_loss(const std::string& name);
  const std::string& loss() const noexcept { return loss_; }

  /// Allocates parameters, gradients and per-layer buffers for batches of up to `max_batch` rows.
  void build(Runtime& rt, size_t max_batch);
  /// Whether build() has run.
  bool built() const noexcept { return rt_ != nullptr; }
  /// Initialises every layer's parameters from the seed (the same on every device).
  void initialize(uint64_t seed);

  /// x:(batch,input_features) → logits:(batch,output_features).
  Tensor forward(const Tensor& x, const StepContext& ctx);
  /// dlogits:(batch,output_features), overwritten → fills gradients(). `gradients_ready(c)` (if
  /// given) runs once each layer's gradient kernels for gradient_ranges()[c] are enqueued, so a
  /// caller can start moving them while the earlier layers' backward runs.
  void backward(Tensor& dlogits, const StepContext& ctx,
                const std::function<void(size_t)>& gradients_ready = {});
  /// The parameter ranges (offset, count) in gradients() of the layers that have parameters, in
  /// the order backward() finishes them: last layer first.
  std::vector<std::pair<size_t, size_t>> gradient_ranges() const;

  /// All parameters, layer by layer (W then b per Dense), flat.
  Tensor& parameters() { return params_; }
  /// Gradients, same layout as parameters().
  Tensor& gradients() { return grads_; }
  /// Non-trainable state (BatchNormalization's moving statistics), layer by layer; empty when none.
  Tensor& state() { return state_; }
  /// Total non-trainable state floats (checked arithmetic).
  size_t state_count() const;
  /// What model files, checkpoints and weight transfers hold: parameters() then state(),
  /// parameter_count() + state_count() floats.
  size_t weight_count() const;
  std::vector<float> download_weights() const;
  /// Sets parameters() and state() from weight_count() floats; ValidationError for another count.
  void upload_weights(const std::vector<float>& weights);
  /// Total trainable parameters (checked arithmetic); input width; output width (the logits);
  /// build()'s max_batch.
  size_t parameter_count() const;
  size_t input_features() const noexcept { return input_features_; }
  /// The per-sample input shape ({features} for a flat model).
  const Shape& input_shape() const noexcept { return input_shape_; }
  size_t output_features() const;
  size_t max_batch() const noexcept { return max_batch_; }
  /// Throws ValidationError (asked vs available bytes) when build(rt, max_batch) cannot fit the device.
  void check_memory(Runtime& rt, size_t max_batch) const;
  /// The layers, input to output.
  const std::vector<std::unique_ptr<Layer>>& layers() const noexcept { return layers_; }
  /// The architecture (what a model file stores besides the weights).
  ModelSpec spec() const;
  /// A Keras-style table: layer (type), output shape, parameter count, and the totals.
  std::string summary() const;
  /// The runtime build() was given; ValidationError before build().
  Runtime& runtime() const;

 private:
  /// The per-sample input shape of each layer, then the model's output shape.
  std::vector<Shape> shapes() const;

  size_t input_features_;
  Shape input_shape_;
  std::string loss_ = "softmax_cross_entropy";
  std::vector<std::unique_ptr<Layer>> layers_;
  Runtime* rt_ = nullptr;
  size_t max_batch_ = 0;
  Tensor params_, grads_, state_;
};

}  // namespace anycl
