// The one list of layer types: name → factory, model-file text, `--layers` tokens, ONNX emission
// and summary name. Sequential, model files, ONNX export and the tests' host reference all go
// through it; a new layer type is one entry in src/nn/registry.cpp.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "anycl/nn/layer.hpp"

namespace anycl {

/// What an ONNX exporter offers a layer type to emit itself at inference (float tensors only).
class OnnxGraph {
 public:
  virtual ~OnnxGraph() = default;
  /// Adds a float initializer of `dims` holding `data`; returns its name.
  virtual std::string initializer(const std::string& name, const std::vector<int64_t>& dims,
                                  const float* data) = 0;
  /// Adds an int64 initializer (shapes for Reshape); returns its name.
  virtual std::string int64_initializer(const std::string& name, const std::vector<int64_t>& values) = 0;
  /// Adds node `op`(inputs) → a new value named `output` (returned), with integer attributes and
  /// integer-list attributes (kernel_shape, strides, pads) and float attributes (epsilon).
  virtual std::string node(
      const std::string& op, const std::vector<std::string>& inputs, const std::string& output,
      const std::vector<std::pair<std::string, int64_t>>& int_attributes = {},
      const std::vector<std::pair<std::string, std::vector<int64_t>>>& list_attributes = {},
      const std::vector<std::pair<std::string, float>>& float_attributes = {}) = 0;
};

/// What a `--layers` token means besides itself: the flags applied to plain hidden sizes.
struct LayerListDefaults {
  Activation activation = Activation::relu;
  Init init = Init::glorot_uniform;
  float dropout = 0.f;  // a Dropout of this rate after each hidden Dense (none when 0)
};

/// One layer type.
struct LayerType {
  /// Registry name: the model file's first word on the layer's line ("dense").
  const char* name;
  /// The type as Keras' summary shows it ("Dense").
  const char* summary_name;
  /// The layer a model-file line's arguments describe; ValidationError saying what is wrong.
  std::unique_ptr<Layer> (*parse)(const std::string& args);
  /// Appends the layers one `--layers` token stands for and returns true, or returns false when
  /// the token is not this type's (ValidationError when it is but its value is wrong).
  bool (*parse_token)(const std::string& token, const LayerListDefaults& defaults,
                      std::vector<LayerSpec>& out);
  /// Emits the layer's inference into `graph` from value `x` with its `params` (followed by its
  /// state_count() floats of state, where it has any); returns the output value's name (x itself for
  /// an identity). `index` counts this type's layers from 0.
  std::string (*to_onnx)(const Layer& layer, OnnxGraph& graph, const std::string& x, const Shape& input,
                         const float* params, size_t index);
};

/// Every layer type, in registry order.
const std::vector<const LayerType*>& layer_types();
/// The type named `name`; ValidationError listing the known names otherwise.
const LayerType& layer_type(const std::string& name);
/// A new layer from its spec (type name and arguments).
std::unique_ptr<Layer> make_layer(const LayerSpec& spec);

}  // namespace anycl
