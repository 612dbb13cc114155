// MaxPool2D over MaxPoolOp: the forward keeps each window's argmax (i32) for the backward.
#include "anycl/nn/maxpool2d.hpp"

#include <fmt/format.h>

#include "anycl/error.hpp"
#include "nn/pool_window.hpp"
#include "ops/pool.hpp"

namespace anycl {
namespace {

std::unique_ptr<Layer> parse_maxpool2d(const std::string& args) {
  const detail::PoolWindow w = detail::parse_pool_args(args, "maxpool2d");
  return std::make_unique<MaxPool2D>(w.size, w.stride);
}

// poolN (stride N, as Keras) or poolNsS.
bool maxpool2d_token(const std::string& token, const LayerListDefaults&, std::vector<LayerSpec>& out) {
  detail::PoolWindow w;
  if (!detail::parse_pool_token(token, "pool", "a pooling", w)) return false;
  out.push_back(MaxPool2D(w.size, w.stride).spec());
  return true;
}

std::string maxpool2d_onnx(const Layer& layer, OnnxGraph& g, const std::string& x, const Shape&, const float*,
                           size_t index) {
  const auto& p = static_cast<const MaxPool2D&>(layer);
  return detail::pool_onnx(g, "MaxPool", fmt::format("maxpool{}", index), x, p.size(), p.stride());
}

}  // namespace

const LayerType& maxpool2d_layer_type() {
  static const LayerType type{"maxpool2d", "MaxPooling2D", parse_maxpool2d, maxpool2d_token, maxpool2d_onnx};
  return type;
}

MaxPool2D::MaxPool2D(size_t size, size_t stride) : size_(size), stride_(stride) {
  detail::check_pool_window(size, stride, "a MaxPool2D");
}

MaxPool2D::~MaxPool2D() = default;

const LayerType& MaxPool2D::type() const { return maxpool2d_layer_type(); }

std::string MaxPool2D::args() const { return fmt::format("{} {}", size_, stride_); }

PoolGeometry MaxPool2D::geometry(const Shape& input) const {
  return detail::pool_geometry(input, size_, stride_, "MaxPool2D");
}

Shape MaxPool2D::output_shape(const Shape& input) const {
  const PoolGeometry g = geometry(input);
  return {g.channels, g.out_h, g.out_w};
}

size_t MaxPool2D::activation_floats(const Shape& input) const {
  const size_t out = shape_size(output_shape(input));
  return checked_add(checked_mul(out, 2, "a MaxPool2D's outputs"), shape_size(input),
                     "a MaxPool2D's activations");
}

void MaxPool2D::build(Runtime& rt, const Shape& input, size_t max_batch, Tensor, Tensor, uint32_t) {
  g_ = geometry(input);
  y_ = Tensor(rt, {max_batch, g_.channels, g_.out_h, g_.out_w});
  arg_ = Tensor(rt, {max_batch, g_.channels, g_.out_h, g_.out_w}, DType::i32);
  dx_ = Tensor(rt, {max_batch, g_.channels, g_.height, g_.width});
  op_ = std::make_unique<MaxPoolOp>(rt);
}

Tensor MaxPool2D::forward(const Tensor& x, const StepContext&) {
  Tensor y = y_.rows(0, x.rows());
  op_->forward(x, y, arg_, g_);
  return y;
}

Tensor MaxPool2D::backward(Tensor& dy, const StepContext&, bool need_dx) {
  if (!need_dx) return {};
  Tensor dx = dx_.rows(0, dy.rows());
  op_->backward(dy, arg_, dx, g_);
  return dx;
}

}  // namespace anycl
