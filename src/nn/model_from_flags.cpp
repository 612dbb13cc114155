// The CLI's model flags → a ModelSpec, each `--layers` token parsed by the registry entry that
// claims it.
#include "anycl/nn/model_from_flags.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "anycl/error.hpp"
#include "anycl/losses/loss.hpp"
#include "anycl/nn/activation.hpp"
#include "anycl/nn/dense.hpp"

namespace anycl {

std::vector<LayerSpec> parse_layer_list(const std::string& text, const LayerListDefaults& defaults) {
  std::vector<LayerSpec> out;
  if (text == "none" || text.empty()) return out;
  const auto bad = [&](const std::string& why) {
    return ValidationError(
        fmt::format("--layers must be comma-separated hidden sizes in [1, 65536] or layer tokens (e.g. "
                    "512,dropout0.25,256), "
                    "got '{}': {}",
                    text, why));
  };
  std::istringstream in(text + ",");  // a trailing empty token is an error, as is an inner one
  std::string token;
  size_t count = 0, tokens = size_t(std::count(text.begin(), text.end(), ',')) + 1;
  while (count < tokens && std::getline(in, token, ',')) {
    ++count;
    if (token.empty()) throw bad("an empty token");
    // TOKEN:ACTIVATION gives one Dense or Conv2D its own activation (Keras' activation=), e.g. 64:tanh.
    LayerListDefaults these = defaults;
    const size_t colon = token.find(':');
    const std::string own = colon == std::string::npos ? "" : token.substr(colon + 1);
    if (colon != std::string::npos) {
      token.resize(colon);
      try {
        these.activation = parse_activation(own);
      } catch (const ValidationError& e) {
        throw bad(e.what());
      }
    }
    const size_t before = out.size();
    bool claimed = false;
    try {
      for (const LayerType* t : layer_types())
        if ((claimed = t->parse_token(token, these, out))) break;
    } catch (const ValidationError& e) {
      throw bad(e.what());
    }
    if (!claimed) throw bad(fmt::format("'{}' is not a layer token", token));
    const bool batchnorm = out.size() > before && out[before].type == "batchnorm";
    if (!own.empty() &&
        (out.size() == before || (out[before].type != "dense" && out[before].type != "conv2d" && !batchnorm)))
      throw bad(
          fmt::format("'{}:{}': only Dense (a size), Conv2D (convFxK) and BatchNormalization (bn) tokens "
                      "take an activation",
                      token, own));
    // bn:ACT: the activation fused into the normalisation ("batchnorm M E ACT"; plain bn is linear).
    if (batchnorm && !own.empty() && these.activation != Activation::linear)
      out[before].args += std::string(" ") + to_string(these.activation);
  }
  return out;
}

ModelSpec model_from_flags(const ModelFlags& flags, size_t input_features, size_t outputs) {
  if (!(flags.dropout >= 0.f && flags.dropout < 1.f))
    throw ValidationError(fmt::format("--dropout must be in [0, 1), got {}", flags.dropout));
  try {
    check_loss_name(flags.loss);
  } catch (const ValidationError& e) {
    throw ValidationError(std::string("--loss: ") + e.what());
  }
  if (input_features == 0) throw ValidationError("the data has no features per sample");
  if (outputs == 0) throw ValidationError("the model needs at least one output (class)");
  ModelSpec spec;
  spec.input_features = input_features;
  spec.layers = parse_layer_list(flags.layers, {flags.activation, flags.init, flags.dropout});
  spec.layers.push_back(Dense(outputs, Activation::linear, flags.init).spec());
  spec.loss = flags.loss;
  return spec;
}

ModelSpec model_from_flags(const ModelFlags& flags, const Shape& image, size_t outputs) {
  ModelSpec spec = model_from_flags(flags, shape_size(image), outputs);
  bool flat_fits = true;
  try {
    Sequential(spec).parameter_count();
  } catch (const ValidationError&) {
    flat_fits = false;
  }
  if (flat_fits) return spec;  // an MLP: stored as before, byte for byte
  spec.input_shape = image;
  try {
    Sequential(spec).parameter_count();  // every layer's shape, checked
  } catch (const ValidationError& e) {
    throw ValidationError(fmt::format("--layers '{}' does not fit the input {}: {}", flags.layers,
                                      shape_string(image), e.what()));
  }
  return spec;
}

ModelSpec reference_cnn(const Shape& image, size_t classes) {
  ModelFlags flags;
  flags.layers = kReferenceCnnLayers;
  flags.dropout = 0.f;  // the list names its own dropouts
  return model_from_flags(flags, image, classes);
}

ModelSpec reference_mlp(size_t input_features, size_t classes) {
  ModelFlags flags;  // the defaults are the reference model
  return model_from_flags(flags, input_features, classes);
}

}  // namespace anycl
