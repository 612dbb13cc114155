// BatchNormalization over BatchNormOp: the batch's statistics in training (and the moving ones
// updated in the same launch), the moving ones at inference; its own output buffer keeps the
// previous layer's output intact for both backward passes. The activation's gradient is taken from
// the output recomputed from the kept input, so the layer keeps nothing more.
#include "anycl/nn/batchnorm.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

#include "activation_onnx.hpp"
#include "anycl/error.hpp"
#include "anycl/nn/maxpool2d.hpp"
#include "ops/batchnorm.hpp"

namespace anycl {

BatchNormalization::BatchNormalization(float momentum, float epsilon, Activation activation)
    : momentum_(momentum), epsilon_(epsilon), activation_(activation) {
  if (!(momentum >= 0.f && momentum <= 1.f))
    throw ValidationError(fmt::format("batch normalisation's momentum must be in [0, 1], got {}", momentum));
  if (!(epsilon > 0.f) || !std::isfinite(epsilon))
    throw ValidationError(fmt::format("batch normalisation's epsilon must be positive, got {}", epsilon));
}

BatchNormalization::~BatchNormalization() = default;

namespace {

// A float written whole (no trailing characters), or false.
bool read_float(const std::string& text, float& out) {
  if (text.empty() || text.size() > 40 || std::isspace(static_cast<unsigned char>(text[0]))) return false;
  char* end = nullptr;
  out = std::strtof(text.c_str(), &end);
  return end == text.c_str() + text.size() && std::isfinite(out);
}

std::unique_ptr<Layer> parse_batchnorm(const std::string& args) {
  const size_t space = args.find(' ');
  const size_t second = space == std::string::npos ? space : args.find(' ', space + 1);
  float momentum = 0.f, epsilon = 0.f;
  if (space == std::string::npos || !read_float(args.substr(0, space), momentum) ||
      !read_float(args.substr(space + 1, second == std::string::npos ? second : second - space - 1),
                  epsilon) ||
      (second != std::string::npos && args.find(' ', second + 1) != std::string::npos))
    throw ValidationError(fmt::format(
        "expected 'batchnorm MOMENTUM EPSILON [ACTIVATION]' (e.g. 0.99 0.001, or 0.9 0.001 relu), got '{}'",
        args));
  const Activation act =
      second == std::string::npos ? Activation::linear : parse_activation(args.substr(second + 1));
  return std::make_unique<BatchNormalization>(momentum, epsilon, act);
}

// The activation of a `bn:ACT` token is added by parse_layer_list (model_from_flags.cpp): plain bn is
// linear, whatever --activation says (that flag is for Dense and Conv2D).
bool batchnorm_token(const std::string& token, const LayerListDefaults&, std::vector<LayerSpec>& out) {
  if (token.rfind("bn", 0) != 0) return false;
  const std::string rest = token.substr(2);
  float momentum = 0.99f, epsilon = 0.001f;
  const size_t sep = rest.find('_');
  if (!rest.empty() && (!read_float(rest.substr(0, sep), momentum) ||
                        (sep != std::string::npos && !read_float(rest.substr(sep + 1), epsilon))))
    throw ValidationError(
        fmt::format("'{}' is not a batch normalisation token: use bn, bnMOMENTUM or bnMOMENTUM_EPSILON (e.g. "
                    "bn0.9_1e-05)",
                    token));
  out.push_back(BatchNormalization(momentum, epsilon).spec());
  return true;
}

// The inference form: the moving statistics (stored after γ and β in `params`, see OnnxGraph).
std::string batchnorm_onnx(const Layer& layer, OnnxGraph& graph, const std::string& x, const Shape& input,
                           const float* params, size_t index) {
  const auto& bn = static_cast<const BatchNormalization&>(layer);
  const size_t c = BatchNormalization::channels(input);
  const std::vector<int64_t> dims{int64_t(c)};
  const std::string name = fmt::format("batchnorm{}", index);
  const std::string y = graph.node("BatchNormalization",
                                   {x, graph.initializer(name + "_gamma", dims, params),
                                    graph.initializer(name + "_beta", dims, params + c),
                                    graph.initializer(name + "_moving_mean", dims, params + 2 * c),
                                    graph.initializer(name + "_moving_variance", dims, params + 3 * c)},
                                   name, {}, {}, {{"epsilon", bn.epsilon()}});
  return detail::activation_onnx(graph, bn.activation(), y);
}

}  // namespace

const LayerType& batchnorm_layer_type() {
  static const LayerType type{"batchnorm", "BatchNormalization", parse_batchnorm, batchnorm_token,
                              batchnorm_onnx};
  return type;
}

const LayerType& BatchNormalization::type() const { return batchnorm_layer_type(); }

std::string BatchNormalization::args() const {
  if (activation_ == Activation::linear) return fmt::format("{} {}", momentum_, epsilon_);
  return fmt::format("{} {} {}", momentum_, epsilon_, to_string(activation_));
}

std::string BatchNormalization::summary_note() const {
  return activation_ == Activation::linear ? std::string() : to_string(activation_);
}

size_t BatchNormalization::channels(const Shape& input) {
  if (input.empty()) throw ValidationError("batch normalisation needs a non-empty input shape");
  return input[0];
}

Shape BatchNormalization::output_shape(const Shape& input) const {
  if (input.size() != 1 && input.size() != 3)
    throw ValidationError(
        fmt::format("BatchNormalization takes features (after Dense) or (C, H, W) (after Conv2D), got {}",
                    shape_string(input)));
  shape_size(input);  // checked
  return input;
}

void BatchNormalization::build(Runtime& rt, const Shape& input, size_t max_batch, Tensor params, Tensor grads,
                               uint32_t) {
  output_shape(input);
  channels_ = channels(input);
  plane_ = input.size() == 3 ? checked_mul(input[1], input[2], "the batch-norm plane") : 1;
  params_ = std::move(params);
  grads_ = std::move(grads);
  stats_ = Tensor(rt, {2 * channels_});
  Shape shape{max_batch};
  shape.insert(shape.end(), input.begin(), input.end());
  y_ = Tensor(rt, shape);
  x_ = Tensor();
  op_ = std::make_unique<BatchNormOp>(rt, activation_);
}

void BatchNormalization::initialize(uint64_t) {
  // γ = 1, β = 0; moving mean 0, moving variance 1 (Keras' initialisers).
  params_.rows(0, channels_).fill(1.f);
  params_.rows(channels_, channels_).fill(0.f);
  if (state_.size() == 2 * channels_) {
    state_.rows(0, channels_).fill(0.f);
    state_.rows(channels_, channels_).fill(1.f);
  }
}

Tensor BatchNormalization::forward(const Tensor& x, const StepContext& ctx) {
  if (state_.size() != 2 * channels_)
    throw ValidationError("BatchNormalization: the layer has no state buffer — build it through Sequential");
  const BatchNormShape s{x.rows(), channels_, plane_};
  Tensor y = y_.rows(0, x.rows());
  if (ctx.training) {
    op_->train_forward(x, y, s, stats_, &state_, momentum_, params_, epsilon_);
    x_ = x;
  } else {
    op_->forward(x, y, s, state_, params_, epsilon_);
  }
  return y;
}

Tensor BatchNormalization::forward_pooled(const Tensor& x, const StepContext& ctx) {
  if (!pool_after_)
    throw ValidationError("BatchNormalization::forward_pooled: no MaxPool2D is linked after this layer");
  if (state_.size() != 2 * channels_)
    throw ValidationError("BatchNormalization: the layer has no state buffer — build it through Sequential");
  const BatchNormShape s{x.rows(), channels_, plane_};
  Tensor pooled = pool_after_->y_.rows(0, x.rows());
  if (ctx.training) {
    op_->train_forward_pooled(x, pooled, pool_after_->arg_, s, pool_after_->g_, stats_, &state_, momentum_,
                              params_, epsilon_);
    x_ = x;
  } else {
    op_->forward_pooled(x, pooled, pool_after_->arg_, s, pool_after_->g_, state_, params_, epsilon_);
  }
  return pooled;
}

bool BatchNormalization::takes_pool_gradient(const MaxPool2D& pool) const {
  return op_ && plane_ > 1 && op_->pools_gradient(plane_) && pool.size() >= 2 && pool.size() == pool.stride();
}

// The training-mode backward through the batch statistics of the last training forward.
Tensor BatchNormalization::backward(Tensor& dy, const StepContext&, bool need_dx) {
  if (x_.size() == 0 || x_.rows() != dy.rows())
    throw ValidationError("BatchNormalization: backward needs a training forward of the same batch first");
  const BatchNormShape s{dy.rows(), channels_, plane_};
  // dy is the pool's gradient where Sequential::backward skipped the linked pool: its dx is the pool's.
  if (pool_after_) {
    const PoolGeometry& pg = pool_after_->g_;
    const size_t pooled = pg.out_h * pg.out_w;
    if (dy.cols() == channels_ * pooled) {
      Tensor dx = pool_after_->dx_.rows(0, dy.rows());
      op_->backward_pooled(x_, dy, pool_after_->arg_.rows(0, dy.rows()), pooled, s, stats_, params_, epsilon_,
                           grads_, need_dx ? &dx : nullptr);
      return need_dx ? dx : Tensor();
    }
  }
  op_->backward(x_, dy, s, stats_, params_, epsilon_, grads_, need_dx ? &dy : nullptr);
  return need_dx ? dy : Tensor();
}

}  // namespace anycl
