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
/// "dropoutR" is a Dropout of rate R; "TOKEN:ACTIVATION" gives a Dense or Conv2D token its own
/// activation, e.g. "64:tanh"). ValidationError naming --layers and the bad token.
std::vector<LayerSpec> parse_layer_list(const std::string& text, const LayerListDefaults& defaults);
/// The model the flags describe for `input_features` inputs and `outputs` outputs (classes): the
/// hidden layers, then a linear Dense of `outputs` units. ValidationError naming the flag.
ModelSpec model_from_flags(const ModelFlags& flags, size_t input_features, size_t outputs);
/// The same for samples that are images of `image` = (C, H, W): a layer list that works on flat
/// inputs (an MLP) keeps the flat input (its model file is unchanged); one with image layers
/// (conv, pool, flatten) gets the image shape. ValidationError naming --layers when the list
/// does not fit the input (e.g. pooling below 1×1, a convolution after flatten).
ModelSpec model_from_flags(const ModelFlags& flags, const Shape& image, size_t outputs);
/// The `--layers` list of the reference CNN (Keras' mnist_cnn without its output layer).
inline constexpr const char* kReferenceCnnLayers =
    "conv32x3,conv64x3,pool2,dropout0.25,flatten,128,dropout0.5";
/// The `--layers` list of the BatchNorm CNN (`anycl train --model bncnn`): Keras' block Conv2D (linear)
/// → BatchNormalization (momentum 0.9, PyTorch's default) → ReLU (fused into the normalisation: bn:relu),
/// and GlobalAveragePooling2D, without its output layer.
inline constexpr const char* kBatchNormCnnLayers =
    "conv32x3:linear,bn0.9:relu,conv64x3:linear,bn0.9:relu,pool2,conv64x3:linear,bn0.9:relu,globalavgpool";
/// Keras' mnist_mlp: input → 512 relu → dropout 0.2 → 512 relu → dropout 0.2 → classes (linear).
ModelSpec reference_mlp(size_t input_features = 784, size_t classes = 10);
/// Keras' mnist_cnn: Conv2D 32 3×3 relu → Conv2D 64 3×3 relu → MaxPool 2×2 → Dropout 0.25 →
/// Flatten → Dense 128 relu → Dropout 0.5 → classes (linear; softmax in the loss). Train with Adam.
ModelSpec reference_cnn(const Shape& image = {1, 28, 28}, size_t classes = 10);

}  // namespace anycl
