// Building a model's architecture from the CLI's words (`--layers 512,512 --activation relu
// --init glorot_uniform --dropout 0.2`), and the reference model. `--layers` tokens go through
// the layer registry one by one, so a new token is one registry entry.
#pragma once

#include <string>
#include <vector>

#include "anycl/nn/registry.hpp"
#include "anycl/nn/sequential.hpp"

namespace anycl {

/// What the CLI's model flags say.
struct ModelFlags {
  std::string layers = "512,512";              // --layers: comma-separated tokens, "none" for none
  Activation activation = Activation::relu;    // --activation: hidden layers' activation
  Init init = Init::glorot_uniform;            // --init: every Dense layer's initialiser
  float dropout = 0.2f;                        // --dropout: after each hidden Dense (0: none)
  std::string loss = "softmax_cross_entropy";  // the loss stored with the model
};

/// The layers `--layers` text stands for, token by token through the registry (a number is a
/// hidden Dense with `defaults`, followed by a Dropout of defaults.dropout when it is > 0;
/// "dropoutR" is a Dropout of rate R). ValidationError naming --layers and the bad token.
std::vector<LayerSpec> parse_layer_list(const std::string& text, const LayerListDefaults& defaults);
/// The model the flags describe for `input_features` inputs and `outputs` outputs (classes): the
/// hidden layers, then a linear Dense of `outputs` units. ValidationError naming the flag.
ModelSpec model_from_flags(const ModelFlags& flags, size_t input_features, size_t outputs);
/// Keras' mnist_mlp: input → 512 relu → dropout 0.2 → 512 relu → dropout 0.2 → classes (linear).
ModelSpec reference_mlp(size_t input_features = 784, size_t classes = 10);

}  // namespace anycl
