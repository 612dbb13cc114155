// What MaxPool2D and AvgPool2D share: a size×size window moved by a stride over NCHW images (valid
// windows), its text forms (the model file's "NAME SIZE STRIDE", the --layers token PREFIXN[sS]), its
// checks and geometry, and its ONNX node. Private to src/nn.
#pragma once

#include <string>

#include "anycl/nn/geometry.hpp"
#include "anycl/nn/layer.hpp"
#include "anycl/nn/registry.hpp"

namespace anycl::detail {

/// The largest window side and stride a pooling layer takes.
inline constexpr size_t kMaxPoolWindow = 64;

/// Throws ValidationError unless size and stride are in [1, kMaxPoolWindow]; `layer` names it ("a
/// MaxPool2D").
void check_pool_window(size_t size, size_t stride, const char* layer);

/// The model file's "SIZE STRIDE" after `name` (e.g. "maxpool2d"); ValidationError naming the form otherwise.
struct PoolWindow {
  size_t size = 0, stride = 0;
};
PoolWindow parse_pool_args(const std::string& args, const char* name);

/// Whether `token` is a --layers pooling token PREFIXN (stride N, as Keras) or PREFIXNsS; a token
/// with the prefix but no valid window throws ValidationError, `what` naming the kind ("a pooling").
bool parse_pool_token(const std::string& token, const std::string& prefix, const char* what, PoolWindow& out);

/// The pooling geometry of a (C, H, W) input, `keras_name` naming the layer in errors.
PoolGeometry pool_geometry(const Shape& input, size_t size, size_t stride, const char* keras_name);

/// The ONNX node `op` ("MaxPool", "AveragePool") named `name` over x.
std::string pool_onnx(OnnxGraph& g, const char* op, const std::string& name, const std::string& x,
                      size_t size, size_t stride);

}  // namespace anycl::detail
