// AvgPool2D (Keras' AveragePooling2D) over AvgPoolOp: valid windows, the mean of each.
#include "anycl/nn/avgpool2d.hpp"

#include <fmt/format.h>

#include "anycl/error.hpp"
#include "nn/pool_window.hpp"
#include "ops/pool.hpp"

namespace anycl {
namespace {

std::unique_ptr<Layer> parse_avgpool2d(const std::string& args) {
  const detail::PoolWindow w = detail::parse_pool_args(args, "avgpool2d");
  return std::make_unique<AvgPool2D>(w.size, w.stride);
}

// avgpoolN (stride N, as Keras) or avgpoolNsS.
bool avgpool2d_token(const std::string& token, const LayerListDefaults&, std::vector<LayerSpec>& out) {
  detail::PoolWindow w;
  if (!detail::parse_pool_token(token, "avgpool", "an average pooling", w)) return false;
  out.push_back(AvgPool2D(w.size, w.stride).spec());
  return true;
}

std::string avgpool2d_onnx(const Layer& layer, OnnxGraph& g, const std::string& x, const Shape&, const float*,
                           size_t index) {
  const auto& p = static_cast<const AvgPool2D&>(layer);
  return detail::pool_onnx(g, "AveragePool", fmt::format("avgpool{}", index), x, p.size(), p.stride());
}

}  // namespace

const LayerType& avgpool2d_layer_type() {
  static const LayerType type{"avgpool2d", "AveragePooling2D", parse_avgpool2d, avgpool2d_token,
                              avgpool2d_onnx};
  return type;
}

AvgPool2D::AvgPool2D(size_t size, size_t stride) : size_(size), stride_(stride) {
  detail::check_pool_window(size, stride, "an AveragePooling2D");
}

AvgPool2D::~AvgPool2D() = default;

const LayerType& AvgPool2D::type() const { return avgpool2d_layer_type(); }

std::string AvgPool2D::args() const { return fmt::format("{} {}", size_, stride_); }

PoolGeometry AvgPool2D::geometry(const Shape& input) const {
  return detail::pool_geometry(input, size_, stride_, "AveragePooling2D");
}

Shape AvgPool2D::output_shape(const Shape& input) const {
  const PoolGeometry g = geometry(input);
  return {g.channels, g.out_h, g.out_w};
}

size_t AvgPool2D::activation_floats(const Shape& input) const {
  return checked_add(shape_size(output_shape(input)), shape_size(input), "an AveragePooling2D's activations");
}

void AvgPool2D::build(Runtime& rt, const Shape& input, size_t max_batch, Tensor, Tensor, uint32_t) {
  g_ = geometry(input);
  y_ = Tensor(rt, {max_batch, g_.channels, g_.out_h, g_.out_w});
  dx_ = Tensor(rt, {max_batch, g_.channels, g_.height, g_.width});
  op_ = std::make_unique<AvgPoolOp>(rt);
}

Tensor AvgPool2D::forward(const Tensor& x, const StepContext&) {
  Tensor y = y_.rows(0, x.rows());
  op_->forward(x, y, g_);
  return y;
}

Tensor AvgPool2D::backward(Tensor& dy, const StepContext&, bool need_dx) {
  if (!need_dx) return {};
  Tensor dx = dx_.rows(0, dy.rows());
  op_->backward(dy, dx, g_);
  return dx;
}

}  // namespace anycl
