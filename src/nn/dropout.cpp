// Dropout layer over DropoutOp; its own output buffer keeps the previous layer's output intact
// for that layer's backward pass.
#include "anycl/nn/dropout.hpp"

#include <fmt/format.h>

#include <sstream>

#include "anycl/error.hpp"
#include "ops/dropout.hpp"

namespace anycl {

// Dropout masks use RNG streams above the ones weight initialisation uses (layer indices).
constexpr uint32_t kDropoutStreamBase = 0x10000;

Dropout::Dropout(float rate) : rate_(rate) {
  if (!(rate >= 0.f && rate < 1.f))
    throw ValidationError(fmt::format("dropout rate must be in [0, 1), got {}", rate));
}

Dropout::~Dropout() = default;

namespace {

float parse_rate(const std::string& text, const char* form) {
  std::istringstream words(text);
  float rate = -1.f;
  std::string extra;
  if (!(words >> rate) || (words >> extra) || !(rate >= 0.f && rate < 1.f))
    throw ValidationError(fmt::format("expected {} with a rate in [0, 1), got '{}'", form, text));
  return rate;
}

std::unique_ptr<Layer> parse_dropout(const std::string& args) {
  return std::make_unique<Dropout>(parse_rate(args, "'dropout RATE'"));
}

bool dropout_token(const std::string& token, const LayerListDefaults&, std::vector<LayerSpec>& out) {
  if (token.rfind("dropout", 0) != 0) return false;
  out.push_back(Dropout(parse_rate(token.substr(7), "'dropoutRATE' (e.g. dropout0.25)")).spec());
  return true;
}

std::string dropout_onnx(const Layer&, OnnxGraph&, const std::string& x, const Shape&, const float*, size_t) {
  return x;  // identity at inference
}

}  // namespace

const LayerType& dropout_layer_type() {
  static const LayerType type{"dropout", "Dropout", parse_dropout, dropout_token, dropout_onnx};
  return type;
}

const LayerType& Dropout::type() const { return dropout_layer_type(); }

std::string Dropout::args() const { return fmt::format("{}", rate_); }

void Dropout::build(Runtime& rt, const Shape& input, size_t max_batch, Tensor, Tensor, uint32_t index) {
  index_ = index;
  if (rate_ > 0.f) {
    Shape shape{max_batch};
    shape.insert(shape.end(), input.begin(), input.end());
    y_ = Tensor(rt, shape);
    keep_ = DeviceBuffer(rt, y_.size(), "dropout mask");
  }
  op_ = std::make_unique<DropoutOp>(rt);
  fused_ = false;  // until Sequential::build links it to a Dense before it
  fused_forward_ = {};
  mask_deferred_ = false;
  kept_ = {};
}

DropoutMask Dropout::mask(const StepContext& ctx) const {
  DropoutMask m;
  m.rate = rate_;
  m.seed = ctx.seed;
  m.step = ctx.step;
  m.stream = kDropoutStreamBase + index_;
  m.row_base = ctx.row_base;
  return m;
}

bool Dropout::same_step(const StepContext& ctx, size_t rows) const {
  return kept_.valid && kept_.seed == ctx.seed && kept_.step == ctx.step && kept_.row_base == ctx.row_base &&
         kept_.rows == rows;
}

bool Dropout::forward_fused(Tensor& y, const Tensor& bias, Activation act, const StepContext& ctx) {
  if (!fused_ || !ctx.training || rate_ == 0.f) return false;
  Tensor out = y_.rows(0, y.rows());
  op_->forward_bias_activation(y, bias, act, out, mask(ctx), keep_);
  kept_ = {true, ctx.seed, ctx.step, ctx.row_base, y.rows()};
  fused_forward_ = {true, y.mem(), y.offset()};
  return true;
}

Tensor Dropout::forward(const Tensor& x, const StepContext& ctx) {
  if (!ctx.training || rate_ == 0.f) return x;
  Tensor y = y_.rows(0, x.rows());
  // The Dense before it wrote this step's output already (forward_fused) from this very x.
  const bool written = fused_forward_.pending && fused_forward_.x == x.mem() &&
                       fused_forward_.x_offset == x.offset() && same_step(ctx, x.rows());
  fused_forward_.pending = false;
  if (written) return y;
  op_->forward(x, y, mask(ctx), &keep_);
  kept_ = {true, ctx.seed, ctx.step, ctx.row_base, x.rows()};
  return y;
}

// The mask the forward of this step stored; regenerated when the last forward was another one. Fused
// into the Dense before it, that layer's backward applies the stored mask instead (take_fused_mask).
Tensor Dropout::backward(Tensor& dy, const StepContext& ctx, bool) {
  mask_deferred_ = false;
  if (!ctx.training || rate_ == 0.f) return dy;
  if (same_step(ctx, dy.rows())) {
    if (fused_) {
      mask_deferred_ = true;
      return dy;
    }
    op_->backward_kept(dy, keep_, 0, rate_);
  } else {
    op_->backward(dy, mask(ctx));
  }
  return dy;
}

bool Dropout::take_fused_mask(size_t rows, const DeviceBuffer*& keep, float& scale) {
  if (!mask_deferred_ || kept_.rows != rows) return false;
  mask_deferred_ = false;
  keep = &keep_;
  scale = 1.0f / (1.0f - rate_);  // as the dropout kernels' launcher computes it
  return true;
}

}  // namespace anycl
