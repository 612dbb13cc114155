// Flatten: a reshape of the batch's tensor, forward and backward.
#include "anycl/nn/flatten.hpp"

#include <fmt/format.h>

#include "anycl/error.hpp"

namespace anycl {
namespace {

std::unique_ptr<Layer> parse_flatten(const std::string& args) {
  if (!args.empty())
    throw ValidationError(fmt::format("expected 'flatten' with no arguments, got 'flatten {}'", args));
  return std::make_unique<Flatten>();
}

bool flatten_token(const std::string& token, const LayerListDefaults&, std::vector<LayerSpec>& out) {
  if (token != "flatten") return false;
  out.push_back(Flatten().spec());
  return true;
}

std::string flatten_onnx(const Layer&, OnnxGraph& g, const std::string& x, const Shape& input, const float*,
                         size_t index) {
  if (input.size() == 1) return x;  // already flat
  return g.node("Flatten", {x}, fmt::format("flatten{}", index), {{"axis", 1}});
}

}  // namespace

const LayerType& flatten_layer_type() {
  static const LayerType type{"flatten", "Flatten", parse_flatten, flatten_token, flatten_onnx};
  return type;
}

const LayerType& Flatten::type() const { return flatten_layer_type(); }

Tensor Flatten::forward(const Tensor& x, const StepContext&) {
  return x.reshaped({x.rows(), shape_size(input_)});
}

Tensor Flatten::backward(Tensor& dy, const StepContext&, bool) {
  Shape shape{dy.rows()};
  shape.insert(shape.end(), input_.begin(), input_.end());
  return dy.reshaped(shape);
}

}  // namespace anycl
