// GlobalPool2D (Keras' GlobalAveragePooling2D and GlobalMaxPooling2D) over GlobalPoolOp: one value
// per channel; the max keeps each plane's argmax (i32) for the backward.
#include "anycl/nn/global_pool2d.hpp"

#include <fmt/format.h>

#include "anycl/error.hpp"
#include "ops/pool.hpp"

namespace anycl {
namespace {

template <bool Max>
std::unique_ptr<Layer> parse_global(const std::string& args) {
  if (!args.empty())
    throw ValidationError(fmt::format("expected '{}' with no arguments, got '{} {}'",
                                      Max ? "globalmaxpool2d" : "globalavgpool2d",
                                      Max ? "globalmaxpool2d" : "globalavgpool2d", args));
  return std::make_unique<GlobalPool2D>(Max);
}

template <bool Max>
bool global_token(const std::string& token, const LayerListDefaults&, std::vector<LayerSpec>& out) {
  if (token != (Max ? "globalmaxpool" : "globalavgpool")) return false;
  out.push_back(GlobalPool2D(Max).spec());
  return true;
}

// (N, C, H, W) → Global{Average,Max}Pool (N, C, 1, 1) → Flatten (N, C), as anycl's output.
template <bool Max>
std::string global_onnx(const Layer&, OnnxGraph& g, const std::string& x, const Shape&, const float*,
                        size_t index) {
  const std::string pooled =
      g.node(Max ? "GlobalMaxPool" : "GlobalAveragePool", {x}, fmt::format("globalpool{}", index));
  return g.node("Flatten", {pooled}, fmt::format("globalpool{}.flat", index), {{"axis", 1}});
}

}  // namespace

const LayerType& globalavgpool2d_layer_type() {
  static const LayerType type{"globalavgpool2d", "GlobalAveragePooling2D", parse_global<false>,
                              global_token<false>, global_onnx<false>};
  return type;
}

const LayerType& globalmaxpool2d_layer_type() {
  static const LayerType type{"globalmaxpool2d", "GlobalMaxPooling2D", parse_global<true>, global_token<true>,
                              global_onnx<true>};
  return type;
}

GlobalPool2D::GlobalPool2D(bool max) : max_(max) {}

GlobalPool2D::~GlobalPool2D() = default;

const LayerType& GlobalPool2D::type() const {
  return max_ ? globalmaxpool2d_layer_type() : globalavgpool2d_layer_type();
}

Shape GlobalPool2D::output_shape(const Shape& input) const {
  if (input.size() != 3)
    throw ValidationError(fmt::format(
        "{} needs image inputs (C, H, W), got {} — pool before Flatten/Dense, and give the model an image "
        "input shape",
        type().summary_name, shape_string(input)));
  shape_size(input);  // checked
  return {input[0]};
}

size_t GlobalPool2D::activation_floats(const Shape& input) const {
  const size_t channels = output_shape(input)[0];
  return checked_add(checked_mul(channels, 2, "a global pooling's outputs"), shape_size(input),
                     "a global pooling's activations");
}

void GlobalPool2D::build(Runtime& rt, const Shape& input, size_t max_batch, Tensor, Tensor, uint32_t) {
  const size_t channels = output_shape(input)[0];
  input_ = input;
  y_ = Tensor(rt, {max_batch, channels});
  arg_ = Tensor(rt, {max_batch, channels}, DType::i32);
  dx_ = Tensor(rt, {max_batch, input[0], input[1], input[2]});
  op_ = std::make_unique<GlobalPoolOp>(rt, max_);
}

Tensor GlobalPool2D::forward(const Tensor& x, const StepContext&) {
  Tensor y = y_.rows(0, x.rows());
  op_->forward(x, y, arg_, input_[1] * input_[2]);
  return y;
}

Tensor GlobalPool2D::backward(Tensor& dy, const StepContext&, bool need_dx) {
  if (!need_dx) return {};
  Tensor dx = dx_.rows(0, dy.rows());
  op_->backward(dy, arg_, dx, input_[1] * input_[2]);
  return dx;
}

}  // namespace anycl
