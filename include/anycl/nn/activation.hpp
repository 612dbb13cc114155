// The activations a layer applies after its bias: the names model files and flags use.
// (Defined beside their kernels' launcher, src/ops/activation.cpp.)
#pragma once

#include <string>

namespace anycl {

enum class Activation { linear = 0, relu = 1, tanh = 2, sigmoid = 3 };

/// "linear", "relu", "tanh" or "sigmoid".
const char* to_string(Activation act) noexcept;
/// Parses one of the names above; throws ValidationError naming the choices otherwise.
Activation parse_activation(const std::string& name);

}  // namespace anycl
