// The ONNX nodes of a layer's activation (Dense, Conv2D, BatchNormalization), in opset 13: Relu,
// Tanh, Sigmoid; Elu (its default alpha 1); leaky_relu as LeakyRelu with alpha 0.2 (Keras' slope;
// ONNX's default alpha is 0.01, so it is written); gelu as z·(1 + Erf(z·(1/√2)))·0.5 (ONNX's Gelu
// needs opset 20).
#pragma once

#include <fmt/format.h>

#include <string>

#include "anycl/nn/activation.hpp"
#include "anycl/nn/registry.hpp"

namespace anycl::detail {

/// The activation `act` applied to the value `z`; returns the output's name (`z` for linear).
inline std::string activation_onnx(OnnxGraph& g, Activation act, const std::string& z) {
  const std::string out = fmt::format("{}.{}", z, to_string(act));
  const auto scalar = [&](const char* name, float value) {
    return g.initializer(fmt::format("{}.{}", z, name), {1}, &value);
  };
  switch (act) {
    case Activation::relu:
      return g.node("Relu", {z}, out);
    case Activation::tanh:
      return g.node("Tanh", {z}, out);
    case Activation::sigmoid:
      return g.node("Sigmoid", {z}, out);
    case Activation::elu:
      return g.node("Elu", {z}, out);
    case Activation::leaky_relu:
      return g.node("LeakyRelu", {z}, out, {}, {}, {{"alpha", 0.2f}});
    case Activation::gelu: {
      const std::string scaled =
          g.node("Mul", {z, scalar("inv_sqrt2", 0.70710678118654752f)}, out + ".scaled");
      const std::string erf = g.node("Erf", {scaled}, out + ".erf");
      const std::string one_plus = g.node("Add", {erf, scalar("one", 1.f)}, out + ".one_plus");
      const std::string product = g.node("Mul", {z, one_plus}, out + ".product");
      return g.node("Mul", {product, scalar("half", 0.5f)}, out);
    }
    default:
      return z;
  }
}

}  // namespace anycl::detail
