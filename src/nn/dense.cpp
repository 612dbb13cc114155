// Dense forward (GEMM NN + bias/activation; one fused kernel for one row at inference) and backward
// (fused activation-grad + bias reduction, then dW = xᵀ·dz as GEMM TN and dx = dz·Wᵀ as GEMM NT,
// or as a transpose of W and a GEMM NN where `anycl tune` measured that faster). Where CLBlast
// runs its indirect GEMMK=0 kernel, which copies op(A) unless A comes transposed, every product is
// asked as TN: y = (xᵀ)ᵀ·W and dx = (dzᵀ)ᵀ·Wᵀ, with xᵀ, dzᵀ and Wᵀ made by anycl's block transpose
// (2–4× faster than CLBlast's own copies on PoCL's CPU devices, docs/dev/performance-log.md).
#include "anycl/nn/dense.hpp"

#include <fmt/format.h>

#include <sstream>

#include "activation_onnx.hpp"
#include "anycl/blas/blas.hpp"
#include "anycl/blas/tuning.hpp"
#include "anycl/error.hpp"
#include "anycl/nn/dropout.hpp"
#include "blas/clblast_library.hpp"
#include "blas/gemm_plan.hpp"
#include "ops/activation.hpp"
#include "ops/conv.hpp"
#include "ops/init.hpp"
#include "ops/transpose.hpp"

namespace anycl {

Dense::Dense(size_t units, Activation activation, Init init)
    : units_(units), activation_(activation), init_(init) {
  if (units == 0) throw ValidationError("a Dense layer needs at least one unit");
}

Dense::~Dense() = default;

namespace {

constexpr size_t kMaxUnits = size_t(1) << 24;

std::unique_ptr<Layer> parse_dense(const std::string& args) {
  std::istringstream words(args);
  long long units = 0;
  std::string act, init, extra;
  if (!(words >> units >> act >> init) || (words >> extra) || units < 1 || size_t(units) > kMaxUnits)
    throw ValidationError(fmt::format(
        "expected 'dense UNITS ACTIVATION INIT' with UNITS in [1, {}], got 'dense {}'", kMaxUnits, args));
  return std::make_unique<Dense>(size_t(units), parse_activation(act), parse_init(init));
}

bool dense_token(const std::string& token, const LayerListDefaults& d, std::vector<LayerSpec>& out) {
  if (token.empty() || token.find_first_not_of("0123456789") != std::string::npos) return false;
  const unsigned long long units = token.size() > 6 ? 0 : std::stoull(token);
  if (units < 1 || units > 65536)
    throw ValidationError(fmt::format("a hidden layer size must be in [1, 65536], got '{}'", token));
  out.push_back(Dense(size_t(units), d.activation, d.init).spec());
  if (d.dropout > 0.f) out.push_back({"dropout", fmt::format("{}", d.dropout)});
  return true;
}

// y = x·W + b as an ONNX Gemm (W is (in, out) as anycl stores it: no transpose), then the activation.
std::string dense_onnx(const Layer& layer, OnnxGraph& g, const std::string& x, const Shape& input,
                       const float* params, size_t index) {
  const auto& d = static_cast<const Dense&>(layer);
  const size_t in = shape_size(input), out = d.units();
  const std::string w = g.initializer(fmt::format("dense{}.W", index), {int64_t(in), int64_t(out)}, params);
  const std::string b = g.initializer(fmt::format("dense{}.b", index), {int64_t(out)}, params + in * out);
  const std::string y =
      g.node("Gemm", {x, w, b}, fmt::format("dense{}", index), {{"transA", 0}, {"transB", 0}});
  return detail::activation_onnx(g, d.activation(), y);
}

size_t flat_input(const Shape& input, size_t units) {
  if (input.size() != 1)
    throw ValidationError(fmt::format("Dense({}) needs flat inputs (one dimension per sample), got {}", units,
                                      shape_string(input)));
  return input[0];
}

}  // namespace

const LayerType& dense_layer_type() {
  static const LayerType type{"dense", "Dense", parse_dense, dense_token, dense_onnx};
  return type;
}

const LayerType& Dense::type() const { return dense_layer_type(); }

std::string Dense::args() const {
  return fmt::format("{} {} {}", units_, to_string(activation_), to_string(init_));
}

std::string Dense::summary_note() const {
  return activation_ == Activation::linear ? std::string() : to_string(activation_);
}

Shape Dense::output_shape(const Shape& input) const {
  flat_input(input, units_);
  return {units_};
}

size_t Dense::parameter_count(const Shape& input) const {
  const size_t in = flat_input(input, units_);
  return checked_add(checked_mul(in, units_, "a Dense layer's weight count"), units_,
                     "a Dense layer's parameter count");
}

size_t Dense::activation_floats(const Shape& input) const {
  const size_t floats =
      checked_add(flat_input(input, units_), units_, "a Dense layer's activations");  // y and dx
  return activation_keeps_input(activation_) ? checked_add(floats, units_, "a Dense layer's activations")
                                             : floats;  // gelu keeps z too
}

std::vector<GemmShape> Dense::gemm_shapes(const Shape& input, size_t batch, bool need_dx, Runtime* rt) const {
  const size_t in = flat_input(input, units_);
  // y = x·W (NN); dW = xᵀ·dz (TN, or dWᵀ = dzᵀ·x where turned round); dx = dz·Wᵀ (NT): y and dx as TN
  // over anycl's transposes where the indirect kernel reads A transposed (forward and backward below).
  // The planner reads CLBlast's parameters, so it is asked only where CLBlast can be called: a Windows
  // build without clblast.dll must still report a model's other faults (a missing checkpoint) first.
  const bool dw_turned =
      rt && detail::clblast_missing().empty() && detail::dense_dw_turned(*rt, batch, in, units_);
  std::vector<GemmShape> g{{"fwd", false, false, batch, units_, in, 1, true},
                           dw_turned ? GemmShape{"dW", true, false, units_, in, batch}
                                     : GemmShape{"dW", true, false, in, units_, batch}};
  if (need_dx) g.push_back({"dX", false, true, batch, in, units_, 1, true});
  return g;
}

void Dense::build(Runtime& rt, const Shape& input, size_t max_batch, Tensor params, Tensor grads,
                  uint32_t index) {
  in_ = flat_input(input, units_);
  max_batch_ = max_batch;
  index_ = index;
  w_ = params.rows(0, in_ * units_).reshaped({in_, units_});
  b_ = params.rows(in_ * units_, units_);
  dw_ = grads.rows(0, in_ * units_).reshaped({in_, units_});
  db_ = grads.rows(in_ * units_, units_);
  y_ = Tensor(rt, {max_batch, units_});
  if (activation_keeps_input(activation_)) z_ = Tensor(rt, {max_batch, units_});
  dx_ = Tensor(rt, {max_batch, in_});
  if (detail::dense_keeps_wt(rt)) wt_ = Tensor(rt, {units_, in_});
  bias_act_ = std::make_unique<BiasActivation>(rt);
  transposer_ = std::make_unique<BlockTranspose>(rt);
  dropout_after_ = nullptr;  // until Sequential::build links the Dropout after it
}

namespace {

// A (rows, cols) matrix at the start of `scratch`, allocated (`floats`) on first use: the
// runtime's GEMM parameters, and so whether it is needed, can change after build (tuning).
Tensor scratch_matrix(Runtime& rt, Tensor& scratch, size_t floats, size_t rows, size_t cols) {
  if (!scratch.size()) scratch = Tensor(rt, {floats});
  return scratch.rows(0, rows * cols).reshaped({rows, cols});
}

}  // namespace

void Dense::initialize(uint64_t seed) {
  // Keras: Glorot-uniform kernel, zero bias. Stream = layer index keeps layers independent.
  uniform_init(w_.runtime(), w_, init_limit(init_, in_, units_), seed, index_);
  b_.fill(0.f);
}

// x:(batch,in) w:(in,out) y:(batch,out)
Tensor Dense::forward(const Tensor& x, const StepContext& ctx) {
  if (x.cols() != in_)
    throw ValidationError(
        fmt::format("Dense({}) expects {} input features, got {}", units_, in_, x.shape_string()));
  Tensor y = y_.rows(0, x.rows());
  // One row at inference (batch-1 predict): one fused kernel, the same bits without a GEMM tile of
  // padding rows.
  if (x.rows() == 1 && !ctx.training) {
    bias_act_->forward_row(x, w_, b_, y, activation_);
  } else {
    Runtime& rt = x.runtime();
    const detail::DenseForwardGemmScope dense_set(rt, x.rows(), units_);  // where the tuning's Dense set pays
    if (detail::dense_forward_as_tn(rt, x.rows(), units_, in_)) {         // the GEMM planner decides
      const size_t slices = detail::split_k_slices(rt, x.rows(), units_, in_);
      const detail::SplitKTransposed turned =
          slices > 1 ? detail::SplitKTransposed{} : detail::split_k_transposed(rt, x.rows(), units_, in_);
      if (turned.slices > 1) {
        forward_split_turned(x, y, turned.slices, turned.padded_m);
      } else {
        Tensor xt = scratch_matrix(rt, xt_, in_ * max_batch_, in_, x.rows());
        transposer_->run(x, xt);
        if (slices > 1)  // y = Σ_s xt[slice s]ᵀ·W[slice s], the slices summed in order
          forward_split(xt, y, slices);
        else
          matmul(xt, Trans::yes, w_, Trans::no, y);
      }
    } else {
      matmul(x, Trans::no, w_, Trans::no, y);
    }
    z_last_ = z_.size() ? z_.rows(0, x.rows()) : Tensor();
    // With a Dropout right after it (training), one launch runs both output stages (Dropout::forward_fused);
    // not for gelu, whose z the fused kernel does not keep (that Dropout then runs its own pass).
    if (z_.size() || !(dropout_after_ && dropout_after_->forward_fused(y, b_, activation_, ctx)))
      bias_act_->forward(y, b_, activation_, z_.size() ? &z_last_ : nullptr);
  }
  x_last_ = x;
  y_last_ = y;
  return y;
}

// y = xtᵀ·W over `slices` slices of the inner size: one strided-batched GEMM TN into parts_ (each
// slice's rows of xt and W are one contiguous block), then one kernel sums the parts in slice order,
// so reruns are bit-identical. For a product of few output tiles and a long k (split_k_slices).
void Dense::forward_split(const Tensor& xt, Tensor& y, size_t slices) {
  Runtime& rt = y.runtime();
  const size_t batch = y.rows(), part = in_ / slices, stride = batch * units_;
  if (parts_.size() < slices * max_batch_ * units_) parts_ = Tensor(rt, {slices * max_batch_ * units_});
  if (!slice_sum_) slice_sum_ = std::make_unique<ConvOps>(rt);
  DeviceBuffer pb = parts_.buffer();
  gemm_strided_batched(rt, Trans::yes, Trans::no, batch, units_, part, 1.f, xt.buffer(), xt.offset(), batch,
                       part * batch, w_.buffer(), w_.offset(), units_, part * units_, 0.f, pb, 0, units_,
                       stride, slices);
  slice_sum_->sum_slices(parts_, slices, stride, units_, y, 1);
}

// yᵀ = Σ_s W[slice s]ᵀ·xt[slice s] (split_k_transposed): xᵀ laid out with its rows padded to
// `padded` columns (whole tiles of the kernel; the padding columns' products are never read), one
// strided-batched GEMM TN into parts_ (each slice units × padded), then one kernel sums the parts
// back into y transposed, in slice order.
void Dense::forward_split_turned(const Tensor& x, Tensor& y, size_t slices, size_t padded) {
  Runtime& rt = y.runtime();
  const size_t batch = y.rows(), part = in_ / slices, stride = units_ * padded;
  if (xt_padded_.size() < in_ * padded) {
    xt_padded_ = Tensor(rt, {in_ * padded});
    xt_padded_.fill(0.f);
  }
  if (parts_.size() < slices * stride) parts_ = Tensor(rt, {slices * stride});
  DeviceBuffer xb = xt_padded_.buffer(), pb = parts_.buffer();
  transposer_->run(batch, in_, x.buffer(), x.offset(), in_, xb, 0, padded);
  gemm_strided_batched(rt, Trans::yes, Trans::no, units_, padded, part, 1.f, w_.buffer(), w_.offset(), units_,
                       part * units_, xb, 0, padded, part * padded, 0.f, pb, 0, padded, stride, slices);
  transposer_->sum_slices(parts_, slices, stride, padded, units_, y);
}

// dy:(batch,out) → dz in place; dW:(in,out) = xᵀ·dz; db = Σ dz; dx:(batch,in) = dz·Wᵀ
Tensor Dense::backward(Tensor& dy, const StepContext&, bool need_dx) {
  // act' from the output, or from the kept z for gelu (common.cl's activate_grad)
  const Tensor& kept = z_.size() ? z_last_ : y_last_;
  const DeviceBuffer* keep = nullptr;
  float scale = 1.f;
  if (dropout_after_ && dropout_after_->take_fused_mask(dy.rows(), keep, scale))
    bias_act_->backward_dropped(kept, dy, *keep, 0, scale, db_,
                                activation_);  // that Dropout's backward too
  else
    bias_act_->backward(kept, dy, db_, activation_);
  Runtime& rt = dy.runtime();
  if (detail::dense_dw_turned(rt, dy.rows(), in_, units_)) {  // dWᵀ = dzᵀ·x, then dW = (dWᵀ)ᵀ
    if (!dwt_.size()) dwt_ = Tensor(rt, {units_, in_});
    matmul(dy, Trans::yes, x_last_, Trans::no, dwt_);
    transposer_->run(dwt_, dw_);
  } else {
    matmul(x_last_, Trans::yes, dy, Trans::no, dw_);
  }
  if (!need_dx) return {};
  Tensor dx = dx_.rows(0, dy.rows());
  const DenseDxForm form = detail::dense_dx(rt, dy.rows(), in_, units_);  // the GEMM planner decides
  if (form == DenseDxForm::transposes_gemm_tn) {
    if (!wt_.size()) wt_ = Tensor(rt, {units_, in_});
    Tensor dzt = scratch_matrix(rt, dzt_, units_ * max_batch_, units_, dy.rows());
    transposer_->run(w_, wt_);
    transposer_->run(dy, dzt);
    matmul(dzt, Trans::yes, wt_, Trans::no, dx);
  } else if (form == DenseDxForm::transpose_w_gemm_nn) {  // measured faster on this device by `anycl tune`
    if (!wt_.size()) wt_ = Tensor(rt, {units_, in_});     // once, when the runtime chose it late
    transpose(w_, wt_);
    matmul(dy, Trans::no, wt_, Trans::no, dx);
  } else {
    matmul(dy, Trans::no, w_, Trans::yes, dx);
  }
  return dx;
}

}  // namespace anycl
