// The weight initialisers a layer can draw its parameters from, by the names model files and flags
// use. (Defined beside their kernel's launcher, src/ops/init.cpp.)
#pragma once

#include <cstddef>
#include <string>

namespace anycl {

enum class Init { glorot_uniform, he_uniform };

/// Parses "glorot_uniform" / "he_uniform"; throws ValidationError otherwise.
Init parse_init(const std::string& name);
/// "glorot_uniform" or "he_uniform".
const char* to_string(Init init) noexcept;

/// The uniform limit of `init` for a (fan_in, fan_out) weight: √(6/(in+out)) (Glorot, as Keras'
/// default) or √(6/in) (He).
float init_limit(Init init, size_t fan_in, size_t fan_out);

}  // namespace anycl
