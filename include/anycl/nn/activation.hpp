// The activations a layer applies after its bias: the names model files and flags use.
// (Defined beside their kernels' launcher, src/ops/activation.cpp.)
#pragma once

#include <string>

namespace anycl {

/// Keras' activations by name; leaky_relu has Keras' slope 0.2, elu alpha 1, gelu the exact erf form
/// (Keras' approximate=False). The values are the kernels' `act` codes (cl_kernels/common.cl).
enum class Activation { linear = 0, relu = 1, tanh = 2, sigmoid = 3, leaky_relu = 4, elu = 5, gelu = 6 };

/// Whether the layer must keep the activation's input z for its backward (gelu, whose derivative is
/// not a function of its output); every other activation's derivative comes from the output.
inline bool activation_keeps_input(Activation act) noexcept { return act == Activation::gelu; }

/// "linear", "relu", "tanh", "sigmoid", "leaky_relu", "elu" or "gelu".
const char* to_string(Activation act) noexcept;
/// Parses one of the names above; throws ValidationError naming the choices otherwise.
Activation parse_activation(const std::string& name);

}  // namespace anycl
