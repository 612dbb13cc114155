// AvgPool2D (Keras' AveragePooling2D) over AvgPoolOp: valid windows, the mean of each.
#include "anycl/nn/avgpool2d.hpp"

#include <fmt/format.h>

#include <sstream>

#include "anycl/error.hpp"
#include "ops/pool.hpp"

namespace anycl {
namespace {

constexpr size_t kMaxWindow = 64;

size_t parse_count(const std::string& text) {
  if (text.empty() || text.size() > 3 || text.find_first_not_of("0123456789") != std::string::npos) return 0;
  return size_t(std::stoul(text));
}

std::unique_ptr<Layer> parse_avgpool2d(const std::string& args) {
  std::istringstream words(args);
  std::string size, stride, extra;
  if (!(words >> size >> stride) || (words >> extra))
    throw ValidationError(
        fmt::format("expected 'avgpool2d SIZE STRIDE' (e.g. avgpool2d 2 2), got 'avgpool2d {}'", args));
  return std::make_unique<AvgPool2D>(parse_count(size), parse_count(stride));
}

// avgpoolN (stride N, as Keras) or avgpoolNsS.
bool avgpool2d_token(const std::string& token, const LayerListDefaults&, std::vector<LayerSpec>& out) {
  if (token.rfind("avgpool", 0) != 0) return false;
  const std::string rest = token.substr(7);
  const size_t s = rest.find('s');
  const size_t size = parse_count(rest.substr(0, s));
  const size_t stride = s == std::string::npos ? size : parse_count(rest.substr(s + 1));
  if (size == 0 || stride == 0)
    throw ValidationError(fmt::format(
        "an average pooling token is avgpoolSIZE[sSTRIDE] (e.g. avgpool2, avgpool3s2), got '{}'", token));
  out.push_back(AvgPool2D(size, stride).spec());
  return true;
}

std::string avgpool2d_onnx(const Layer& layer, OnnxGraph& g, const std::string& x, const Shape&, const float*,
                           size_t index) {
  const auto& p = static_cast<const AvgPool2D&>(layer);
  const int64_t size = int64_t(p.size()), stride = int64_t(p.stride());
  return g.node("AveragePool", {x}, fmt::format("avgpool{}", index), {},
                {{"kernel_shape", {size, size}}, {"strides", {stride, stride}}});
}

}  // namespace

const LayerType& avgpool2d_layer_type() {
  static const LayerType type{"avgpool2d", "AveragePooling2D", parse_avgpool2d, avgpool2d_token,
                              avgpool2d_onnx};
  return type;
}

AvgPool2D::AvgPool2D(size_t size, size_t stride) : size_(size), stride_(stride) {
  if (size < 1 || size > kMaxWindow || stride < 1 || stride > kMaxWindow)
    throw ValidationError(
        fmt::format("an AveragePooling2D needs size and stride in [1, {}], got size {}, stride {}",
                    kMaxWindow, size, stride));
}

AvgPool2D::~AvgPool2D() = default;

const LayerType& AvgPool2D::type() const { return avgpool2d_layer_type(); }

std::string AvgPool2D::args() const { return fmt::format("{} {}", size_, stride_); }

PoolGeometry AvgPool2D::geometry(const Shape& input) const {
  if (input.size() != 3)
    throw ValidationError(
        fmt::format("AveragePooling2D({}×{}) needs image inputs (C, H, W), got {} — pool before "
                    "Flatten/Dense, and give the model an image input shape",
                    size_, size_, shape_string(input)));
  PoolGeometry g;
  g.channels = input[0], g.height = input[1], g.width = input[2];
  g.size = size_, g.stride = stride_;
  if (g.height < size_ || g.width < size_)
    throw ValidationError(
        fmt::format("AveragePooling2D({}×{}) cannot pool an input of {}: it would leave less than 1×1 "
                    "— remove a pooling layer or use a smaller window",
                    size_, size_, shape_string(input)));
  g.out_h = (g.height - size_) / stride_ + 1;
  g.out_w = (g.width - size_) / stride_ + 1;
  shape_size(input);  // checked
  return g;
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
