// Dense forward (GEMM NN + bias/activation) and backward (fused activation-grad + bias
// reduction, then dW = xᵀ·dz as GEMM TN and dx = dz·Wᵀ as GEMM NT, or as a transpose of W and a
// GEMM NN where `anycl tune` measured that faster).
#include "anycl/nn/dense.hpp"

#include <fmt/format.h>

#include "anycl/blas.hpp"
#include "anycl/error.hpp"

namespace anycl {

Dense::Dense(size_t units, Activation activation, Init init)
    : units_(units), activation_(activation), init_(init) {
  if (units == 0) throw ValidationError("a Dense layer needs at least one unit");
}

LayerSpec Dense::spec() const {
  LayerSpec s;
  s.kind = LayerSpec::Kind::dense;
  s.units = units_;
  s.activation = activation_;
  s.init = init_;
  return s;
}

void Dense::build(Runtime& rt, size_t input_features, size_t max_batch, Tensor params, Tensor grads,
                  uint32_t index) {
  in_ = input_features;
  index_ = index;
  w_ = params.rows(0, in_ * units_).reshaped({in_, units_});
  b_ = params.rows(in_ * units_, units_);
  dw_ = grads.rows(0, in_ * units_).reshaped({in_, units_});
  db_ = grads.rows(in_ * units_, units_);
  y_ = Tensor(rt, {max_batch, units_});
  dx_ = Tensor(rt, {max_batch, in_});
  if (rt.transposed_dx()) wt_ = Tensor(rt, {units_, in_});
  bias_act_ = std::make_unique<BiasActivation>(rt);
}

void Dense::initialize(uint64_t seed) {
  // Keras: Glorot-uniform kernel, zero bias. Stream = layer index keeps layers independent.
  uniform_init(w_.runtime(), w_, init_limit(init_, in_, units_), seed, index_);
  b_.fill(0.f);
}

// x:(batch,in) w:(in,out) y:(batch,out)
Tensor Dense::forward(const Tensor& x, const StepContext&) {
  if (x.cols() != in_)
    throw ValidationError(
        fmt::format("Dense({}) expects {} input features, got {}", units_, in_, x.shape_string()));
  Tensor y = y_.rows(0, x.rows());
  matmul(x, Trans::no, w_, Trans::no, y);
  bias_act_->forward(y, b_, activation_);
  x_last_ = x;
  y_last_ = y;
  return y;
}

// dy:(batch,out) → dz in place; dW:(in,out) = xᵀ·dz; db = Σ dz; dx:(batch,in) = dz·Wᵀ
Tensor Dense::backward(Tensor& dy, const StepContext&, bool need_dx) {
  bias_act_->backward(y_last_, dy, db_, activation_);
  matmul(x_last_, Trans::yes, dy, Trans::no, dw_);
  if (!need_dx) return {};
  Tensor dx = dx_.rows(0, dy.rows());
  if (dx.runtime().transposed_dx()) {  // measured faster on this device by `anycl tune`
    if (!wt_.size()) wt_ = Tensor(dx.runtime(), {units_, in_});  // once, when the runtime chose it late
    transpose(w_, wt_);
    matmul(dy, Trans::no, wt_, Trans::no, dx);
  } else {
    matmul(dy, Trans::no, w_, Trans::yes, dx);
  }
  return dx;
}

}  // namespace anycl
