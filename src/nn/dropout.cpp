// Dropout layer over DropoutOp; its own output buffer keeps the previous layer's output intact
// for that layer's backward pass.
#include "anycl/nn/dropout.hpp"

#include <fmt/format.h>

#include "anycl/error.hpp"

namespace anycl {

// Dropout masks use RNG streams above the ones weight initialisation uses (layer indices).
constexpr uint32_t kDropoutStreamBase = 0x10000;

Dropout::Dropout(float rate) : rate_(rate) {
  if (!(rate >= 0.f && rate < 1.f))
    throw ValidationError(fmt::format("dropout rate must be in [0, 1), got {}", rate));
}

LayerSpec Dropout::spec() const {
  LayerSpec s;
  s.kind = LayerSpec::Kind::dropout;
  s.rate = rate_;
  return s;
}

void Dropout::build(Runtime& rt, size_t input_features, size_t max_batch, Tensor, Tensor, uint32_t index) {
  index_ = index;
  if (rate_ > 0.f) y_ = Tensor(rt, {max_batch, input_features});
  op_ = std::make_unique<DropoutOp>(rt);
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

Tensor Dropout::forward(const Tensor& x, const StepContext& ctx) {
  if (!ctx.training || rate_ == 0.f) return x;
  Tensor y = y_.rows(0, x.rows());
  op_->forward(x, y, mask(ctx));
  return y;
}

Tensor Dropout::backward(Tensor& dy, const StepContext& ctx, bool) {
  if (ctx.training && rate_ > 0.f) op_->backward(dy, mask(ctx));
  return dy;
}

}  // namespace anycl
