// Conv2D as whole-batch GEMMs. Forward: im2col of the batch into col:(C·K·K, B·P) (P = OH·OW), one
// CLBlast GEMM cf = W·col:(F, B·P), then one pass that adds the bias, applies the activation and
// reorders to NCHW; or CLBlast's Convgemm, then the bias and activation in place. Backward: one pass
// for dz = dy·act'(y), reordered channel-major into cf, and one summing cf's rows into db; then dW = dz·colᵀ
// as a GEMM TN over dz's rows and colᵀ (both (B·P, ·), written by two passes, colᵀ by im2row from x in
// channels-last order with its columns tap-major, put back in W's order when the slices are summed,
// their rows padded so that CLBlast copies neither; NN over dz itself where there is nothing to pad or split)
// and dcol = Wᵀ·dz (into col's buffer), one GEMM each for the whole batch (the batch is the GEMMs' inner or
// outer size, which keeps CLBlast on its fast, large-matrix kernel), and col2im for dx — no atomics, so
// reruns are bit-identical. A dW of few output tiles (the first layer's 32×9, the second's 64×288) has the
// batch as its inner size: a few work-groups would run it all, so it is split over slices of whole samples (a
// strided-batched GEMM, or one GEMM per slice where the GEMM planner says so) and the slices
// summed in order by a kernel. A patch C·K·K too short for a GEMM to pay (the first layer's 9 on a
// CPU; ConvForward::automatic) runs its forward pass and weight gradient as direct kernels instead
// (conv_direct.cl): no column matrix, no GEMM; its dx, where needed, is the GEMM's. A 3×3 kernel at
// stride 1 with a longer patch (the second layer's 288) runs its forward pass as Winograd's F(4×4, 3×3)
// on a CPU (conv_winograd.cl: 36 GEMMs with 4 times fewer multiplications than im2col's), and its dx
// and dW likewise (winograd_dx_for, winograd_dw_for: no column matrix).
#include "anycl/nn/conv2d.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>
#include <sstream>

#include "activation_onnx.hpp"
#include "anycl/blas/blas.hpp"
#include "anycl/blas/tuning.hpp"
#include "anycl/error.hpp"
#include "anycl/nn/maxpool2d.hpp"
#include "blas/gemm_plan.hpp"
#include "ops/activation.hpp"
#include "ops/conv.hpp"
#include "ops/conv_direct.hpp"
#include "ops/conv_winograd.hpp"
#include "ops/init.hpp"
#include "ops/kernel_call.hpp"

namespace anycl {

const char* to_string(Padding p) noexcept { return p == Padding::same ? "same" : "valid"; }

Padding parse_padding(const std::string& text) {
  if (text == "valid") return Padding::valid;
  if (text == "same") return Padding::same;
  throw ValidationError("unknown padding '" + text + "' — choose valid or same");
}

namespace {

constexpr size_t kMaxFilters = 65536, kMaxKernel = 64, kMaxStride = 64;

void check_config(size_t filters, size_t kernel, size_t stride) {
  if (filters < 1 || filters > kMaxFilters || kernel < 1 || kernel > kMaxKernel || stride < 1 ||
      stride > kMaxStride)
    throw ValidationError(
        fmt::format("a Conv2D needs filters in [1, {}], kernel in [1, {}] and stride in [1, {}], "
                    "got {} filters, kernel {}, stride {}",
                    kMaxFilters, kMaxKernel, kMaxStride, filters, kernel, stride));
}

size_t parse_count(const std::string& text, const std::string& what) {
  if (text.empty() || text.size() > 6 || text.find_first_not_of("0123456789") != std::string::npos)
    throw ValidationError(fmt::format("expected a positive number for {}, got '{}'", what, text));
  return size_t(std::stoul(text));
}

std::unique_ptr<Layer> parse_conv2d(const std::string& args) {
  std::istringstream words(args);
  std::string filters, kernel, stride, padding, act, init, extra;
  if (!(words >> filters >> kernel >> stride >> padding >> act >> init) || (words >> extra))
    throw ValidationError(fmt::format(
        "expected 'conv2d FILTERS KERNEL STRIDE PADDING ACTIVATION INIT' (e.g. conv2d 32 3 1 valid relu "
        "glorot_uniform), got 'conv2d {}'",
        args));
  return std::make_unique<Conv2D>(parse_count(filters, "FILTERS"), parse_count(kernel, "KERNEL"),
                                  parse_count(stride, "STRIDE"), parse_padding(padding),
                                  parse_activation(act), parse_init(init));
}

// convFxK, then optional sS and "same": conv32x3, conv64x3s2, conv32x5same.
bool conv2d_token(const std::string& token, const LayerListDefaults& d, std::vector<LayerSpec>& out) {
  if (token.rfind("conv", 0) != 0) return false;
  const auto bad = [&] {
    return ValidationError(fmt::format(
        "a convolution token is convFILTERSxKERNEL[sSTRIDE][same] (e.g. conv32x3, conv64x3s2same), got '{}'",
        token));
  };
  std::string rest = token.substr(4);
  Padding padding = Padding::valid;
  if (rest.size() > 4 && rest.compare(rest.size() - 4, 4, "same") == 0) {
    padding = Padding::same;
    rest.resize(rest.size() - 4);
  }
  const size_t x = rest.find('x'), s = rest.find('s');
  if (x == std::string::npos) throw bad();
  try {
    const size_t filters = parse_count(rest.substr(0, x), "FILTERS");
    const size_t kernel = parse_count(rest.substr(x + 1, s == std::string::npos ? s : s - x - 1), "KERNEL");
    const size_t stride = s == std::string::npos ? 1 : parse_count(rest.substr(s + 1), "STRIDE");
    out.push_back(Conv2D(filters, kernel, stride, padding, d.activation, d.init).spec());
  } catch (const ValidationError&) {
    throw bad();
  }
  return true;
}

std::string conv2d_onnx(const Layer& layer, OnnxGraph& g, const std::string& x, const Shape& input,
                        const float* params, size_t index) {
  const auto& c = static_cast<const Conv2D&>(layer);
  const ConvGeometry geo = c.geometry(input);
  const int64_t f = int64_t(c.filters()), k = int64_t(geo.kernel), ch = int64_t(geo.channels);
  const std::string w = g.initializer(fmt::format("conv{}.W", index), {f, ch, k, k}, params);
  const std::string b = g.initializer(fmt::format("conv{}.b", index), {f}, params + size_t(f * ch * k * k));
  // End pads: whatever makes ((H + top + bottom − K) / S + 1) = OH.
  const int64_t bottom =
      int64_t((geo.out_h - 1) * geo.stride + geo.kernel) - int64_t(geo.height + geo.pad_top);
  const int64_t right =
      int64_t((geo.out_w - 1) * geo.stride + geo.kernel) - int64_t(geo.width + geo.pad_left);
  const std::string y = g.node("Conv", {x, w, b}, fmt::format("conv{}", index), {},
                               {{"kernel_shape", {k, k}},
                                {"strides", {int64_t(geo.stride), int64_t(geo.stride)}},
                                {"pads",
                                 {int64_t(geo.pad_top), int64_t(geo.pad_left), std::max<int64_t>(bottom, 0),
                                  std::max<int64_t>(right, 0)}}});
  return detail::activation_onnx(g, c.activation(), y);
}

}  // namespace

const LayerType& conv2d_layer_type() {
  static const LayerType type{"conv2d", "Conv2D", parse_conv2d, conv2d_token, conv2d_onnx};
  return type;
}

Conv2D::Conv2D(size_t filters, size_t kernel, size_t stride, Padding padding, Activation activation,
               Init init)
    : filters_(filters),
      kernel_(kernel),
      stride_(stride),
      padding_(padding),
      activation_(activation),
      init_(init) {
  check_config(filters, kernel, stride);
}

Conv2D::~Conv2D() = default;

const LayerType& Conv2D::type() const { return conv2d_layer_type(); }

std::string Conv2D::args() const {
  return fmt::format("{} {} {} {} {} {}", filters_, kernel_, stride_, to_string(padding_),
                     to_string(activation_), to_string(init_));
}

std::string Conv2D::summary_note() const {
  return activation_ == Activation::linear ? std::string() : to_string(activation_);
}

ConvGeometry Conv2D::geometry(const Shape& input) const {
  if (input.size() != 3)
    throw ValidationError(fmt::format(
        "Conv2D({}, {}×{}) needs image inputs (C, H, W), got {} — put convolutions before Flatten/Dense, and "
        "give the model an image input shape",
        filters_, kernel_, kernel_, shape_string(input)));
  ConvGeometry g;
  g.channels = input[0], g.height = input[1], g.width = input[2];
  g.kernel = kernel_, g.stride = stride_;
  if (padding_ == Padding::valid) {
    if (g.height < kernel_ || g.width < kernel_)
      throw ValidationError(
          fmt::format("Conv2D({}, {}×{}, valid) cannot slide over an input of {}: the image is "
                      "smaller than the kernel — use fewer pooling layers or 'same' padding",
                      filters_, kernel_, kernel_, shape_string(input)));
    g.out_h = (g.height - kernel_) / stride_ + 1;
    g.out_w = (g.width - kernel_) / stride_ + 1;
  } else {  // Keras "same": OH = ceil(H/S), the padding split with the extra row/column at the end
    g.out_h = (g.height + stride_ - 1) / stride_;
    g.out_w = (g.width + stride_ - 1) / stride_;
    const size_t pad_h = (g.out_h - 1) * stride_ + kernel_, pad_w = (g.out_w - 1) * stride_ + kernel_;
    g.pad_top = pad_h > g.height ? (pad_h - g.height) / 2 : 0;
    g.pad_left = pad_w > g.width ? (pad_w - g.width) / 2 : 0;
  }
  const size_t patch =
      checked_mul(checked_mul(g.channels, kernel_, "a Conv2D's patch"), kernel_, "a Conv2D's patch");
  checked_mul(patch, checked_mul(g.out_h, g.out_w, "a Conv2D's output plane"), "a Conv2D's column matrix");
  return g;
}

Shape Conv2D::output_shape(const Shape& input) const {
  const ConvGeometry g = geometry(input);
  return {filters_, g.out_h, g.out_w};
}

size_t Conv2D::parameter_count(const Shape& input) const {
  const ConvGeometry g = geometry(input);
  return checked_add(checked_mul(filters_, g.patch(), "a Conv2D's weight count"), filters_,
                     "a Conv2D's parameter count");
}

size_t Conv2D::activation_floats(const Shape& input) const {
  const ConvGeometry g = geometry(input);
  const size_t y = checked_mul(filters_, g.plane(), "a Conv2D's output");
  const size_t col = checked_mul(g.patch(), g.plane(), "a Conv2D's column matrix");
  return checked_add(  // y, cf and dz's rows (and gelu's z); x and its channels-last copy; col (im2col)
                       // and colt (im2row; more where padded)
      checked_add(checked_mul(y, activation_keeps_input(activation_) ? 4 : 3, "a Conv2D's activations"),
                  checked_mul(shape_size(input), 2, "a Conv2D's activations"), "a Conv2D's activations"),
      checked_mul(col, 2, "a Conv2D's activations"), "a Conv2D's activations");
}

size_t Conv2D::scratch_floats(const Shape& input, size_t batch, Runtime& rt) const {
  const ConvGeometry g = geometry(input);
  // Winograd's planes where it runs (ConvWinogradOps reserves them on first use)
  return winograd_for(&rt, g) ? ConvWinogradOps::scratch_floats(&rt, g, filters_, batch) : 0;
}

size_t Conv2D::dw_slices(size_t batch) const noexcept {
  return detail::conv_dw_slices(rt_, filters_, g_.patch(), g_.plane(), batch);  // the GEMM planner decides
}

bool Conv2D::uses_direct(const Runtime* rt, const Shape& input) const {
  return direct_for(rt, geometry(input).patch());
}

bool Conv2D::direct_for(const Runtime* rt, size_t patch) const {
  if (patch > kDirectMaxPatch) return false;
  // automatic: measured faster on CPUs only so far (docs/dev/performance-log.md)
  return forward_algo_ == ConvForward::direct ||
         (forward_algo_ == ConvForward::automatic && rt && rt->info().type == DeviceType::cpu);
}

bool Conv2D::uses_winograd(const Runtime* rt, const Shape& input) const {
  return winograd_for(rt, geometry(input));
}

bool Conv2D::winograd_for(const Runtime* rt, const ConvGeometry& g) const {
  if (!ConvWinogradOps::fits(g) || direct_for(rt, g.patch())) return false;
  // automatic: measured faster on CPUs only so far (docs/dev/performance-log.md)
  return forward_algo_ == ConvForward::winograd ||
         (forward_algo_ == ConvForward::automatic && rt && rt->info().type == DeviceType::cpu);
}

bool Conv2D::winograd_dx_for(const Runtime* rt, const ConvGeometry& g) const {
  // On PoCL too since its input stage loads a chunk's edge columns whole (the reference CNN's conv 2:
  // 13.1 → 7.6 ms on PoCL, 10.6 → 6.5 on Intel's runtime; docs/dev/performance-log.md).
  return winograd_for(rt, g) && rt;
}

bool Conv2D::winograd_dw_for(const Runtime* rt, const ConvGeometry& g) const {
  // The reference CNN's conv 2: im2row, its GEMM and the slices' sum against Winograd's along x, 23.9 →
  // 19.4 ms on PoCL's AVX-512 entry, 29.8 → 15.3 on Intel's runtime (docs/dev/performance-log.md).
  return winograd_for(rt, g) && rt;
}

ConvWinogradOps& Conv2D::winograd_ops() {
  if (!winograd_ops_) winograd_ops_ = std::make_unique<ConvWinogradOps>(w_.runtime());
  return *winograd_ops_;
}

ConvDirectOps& Conv2D::direct_ops() {
  if (!direct_ops_) direct_ops_ = std::make_unique<ConvDirectOps>(w_.runtime());
  return *direct_ops_;
}

Conv2D::DwLayout Conv2D::dw_layout(Runtime& rt, size_t patch, size_t part) const {
  const detail::ConvDwGemmScope dw_set(rt);  // padded for the tiles dW runs on (backward())
  const GemmPadding pad = gemm_padding(rt, filters_, patch, part);
  return {detail::round_up(filters_, pad.m), detail::round_up(patch, pad.n)};
}

size_t Conv2D::dx_rows(Runtime& rt, size_t patch, size_t columns) const {
  return detail::round_up(patch, gemm_padding(rt, patch, columns, filters_).m);
}

// A scratch tensor of at least `floats` (a new tuning can ask for more padding than build() saw).
Tensor& Conv2D::reserve(Tensor& t, size_t floats) {
  if (t.size() < floats) t = Tensor(w_.runtime(), {floats});
  return t;
}

Tensor& Conv2D::colt_for(size_t columns, size_t kp) {
  const size_t before = colt_.size();
  reserve(colt_, columns * kp);
  if (colt_.size() != before || colt_zeroed_ld_ != kp) {  // a new buffer, or rows of a new length
    if (kp != g_.patch()) {
      colt_.fill(0.f);
      ops_->fill_column(colt_, colt_.size() / kp, kp, g_.patch(), 1.f);  // db's column (backward())
    }
    colt_zeroed_ld_ = kp;
  }
  return colt_;
}

std::vector<GemmShape> Conv2D::gemm_shapes(const Shape& input, size_t batch, bool need_dx,
                                           Runtime* rt) const {
  const ConvGeometry g = geometry(input);
  const size_t columns = checked_mul(batch, g.plane(), "a Conv2D's column matrix"), k = g.patch();
  // cf = W·col (NN); dW = dz·colᵀ (TN over dz's rows and im2row's colᵀ, per slice of the batch
  // when split, then summed by a kernel; NN over dz where neither split nor padded); dcol = Wᵀ·dz (TN).
  // On a runtime, as backward() runs them there: the slices and padding its GEMM planner gives.
  std::vector<GemmShape> shapes;
  if (!uses_direct(rt, input)) {  // direct kernels run the forward pass and dW otherwise
    if (winograd_for(rt, g))
      shapes.push_back(ConvWinogradOps::gemm_shape(rt, g, filters_, batch));
    else
      shapes.push_back({"fwd", false, false, filters_, columns, k});
    const size_t slices = detail::conv_dw_slices(rt, filters_, k, g.plane(), batch), part = columns / slices;
    const DwLayout d = rt && !winograd_dw_for(rt, g) ? dw_layout(*rt, k, part) : DwLayout{filters_, k};
    if (winograd_dw_for(rt, g)) {
      const detail::ConvDwGemmScope dw_set(*rt);  // laid out for the tiles dW runs on (backward())
      shapes.push_back(ConvWinogradOps::dw_gemm_shape(rt, g, filters_, batch));
    } else if (rt && slices == 1 && d.fp == filters_ && d.kp == k)  // nothing to pad: NN over dz
      shapes.push_back({"dW", false, false, filters_, k, columns});
    else
      shapes.push_back({"dW", true, false, d.fp, d.kp, part, slices});
  }
  if (need_dx && winograd_dx_for(rt, g))
    shapes.push_back(ConvWinogradOps::dx_gemm_shape(rt, g, filters_, batch));
  else if (need_dx)
    shapes.push_back({"dX", true, false, rt ? dx_rows(*rt, k, columns) : k, columns, filters_});
  return shapes;
}

void Conv2D::build(Runtime& rt, const Shape& input, size_t max_batch, Tensor params, Tensor grads,
                   uint32_t index) {
  g_ = geometry(input);
  index_ = index;
  rt_ = &rt;
  const size_t wn = filters_ * g_.patch();
  w_ = params.rows(0, wn).reshaped({filters_, g_.patch()});
  b_ = params.rows(wn, filters_);
  dw_ = grads.rows(0, wn).reshaped({filters_, g_.patch()});
  db_ = grads.rows(wn, filters_);
  y_ = Tensor(rt, {max_batch, filters_, g_.out_h, g_.out_w});
  if (activation_keeps_input(activation_)) z_ = Tensor(rt, {max_batch, filters_, g_.out_h, g_.out_w});
  dx_ = Tensor(rt, {max_batch, g_.channels, g_.height, g_.width});
  cf_ = Tensor(rt, {filters_, max_batch * g_.plane()});
  colt_zeroed_ld_ = 0;
  // The GEMM path's scratch: col (im2col, and dx's dcol), colᵀ with its channels-last x (im2row), dz's
  // rows and dW's slices. None where direct kernels run the forward pass and dW (a first layer's
  // 22 MB at batch 128 for the reference CNN's conv 1): a later set_forward() or dx's GEMM reserves
  // what it uses on first use.
  if (!direct_for(&rt, g_.patch()) && !winograd_dw_for(&rt, g_)) {
    const size_t most_columns = max_batch * g_.plane();
    // flat: a batch's (K, B·P) is its front
    col_ = Tensor(rt, {dx_rows(rt, g_.patch(), most_columns) * most_columns});
    // dW's operands and slices, padded for the tuning in force now (backward grows them if it changes)
    const size_t most_slices = detail::conv_most_dw_slices(rt, filters_, g_.patch(), g_.plane(), max_batch);
    const DwLayout d = dw_layout(rt, g_.patch(), max_batch * g_.plane() / most_slices);
    colt_ = Tensor(rt, {d.kp * max_batch * g_.plane()});
    xt_ = Tensor(rt, {max_batch * g_.channels * g_.height * g_.width});
    dz_rows_ = Tensor(rt, {d.fp * max_batch * g_.plane()});
    // Room for the most slices any batch up to max_batch can take (a smaller batch may split where
    // max_batch itself does not, e.g. a last batch of 8 under a maximum of 17).
    dw_parts_ = Tensor(rt, {most_slices * d.fp * d.kp});
  }
  ops_ = std::make_unique<ConvOps>(rt);
  // The direct kernels' program is built here, not in the first step, where this runtime runs them
  // (a later set_forward() that asks for them makes them on first use).
  if (direct_for(&rt, g_.patch())) direct_ops_ = std::make_unique<ConvDirectOps>(rt);
  if (winograd_for(&rt, g_)) winograd_ops_ = std::make_unique<ConvWinogradOps>(rt);
  bias_act_ = std::make_unique<BiasActivation>(rt);
}

void Conv2D::initialize(uint64_t seed) {
  // Keras: Glorot-uniform over fan_in = C·K·K and fan_out = F·K·K, zero bias.
  uniform_init(w_.runtime(), w_, init_limit(init_, g_.patch(), filters_ * kernel_ * kernel_), seed, index_);
  b_.fill(0.f);
}

// x:(batch, C·H·W) → y:(batch, F, OH, OW)
Tensor Conv2D::forward(const Tensor& x, const StepContext&) {
  const size_t batch = x.rows(), columns = batch * g_.plane(), k = g_.patch();
  if (x.cols() != g_.channels * g_.height * g_.width)
    throw ValidationError(fmt::format("Conv2D expects ({}, {}, {}) inputs, got {}", g_.channels, g_.height,
                                      g_.width, x.shape_string()));
  Tensor y = y_.rows(0, batch);
  z_last_ = z_.size() ? z_.rows(0, batch) : Tensor();  // gelu: the output before the activation
  Tensor* z = z_.size() ? &z_last_ : nullptr;
  const bool symmetric = g_.pad_top == g_.pad_left &&
                         (g_.out_h - 1) * g_.stride + g_.kernel == g_.height + 2 * g_.pad_top &&
                         (g_.out_w - 1) * g_.stride + g_.kernel == g_.width + 2 * g_.pad_left;
  if (direct_for(&x.runtime(), k)) {
    direct_ops().forward(x, w_, b_, y, g_, activation_, z);
  } else if (winograd_for(&x.runtime(), g_)) {
    winograd_ops().forward(x, w_, b_, y, g_, activation_, z);
  } else if (forward_algo_ == ConvForward::convgemm && symmetric) {
    DeviceBuffer yb = y.buffer();
    convgemm(x.runtime(), g_.channels, g_.height, g_.width, g_.kernel, g_.pad_top, g_.stride, filters_, batch,
             x.buffer(), x.offset(), w_.buffer(), w_.offset(), yb, y.offset());
    bias_act_->forward_channels(y, b_, g_.plane(), activation_, z);
  } else {
    ops_->im2col(x, reserve(col_, k * y_.rows() * g_.plane()), g_);  // room for the largest batch
    DeviceBuffer cfb = cf_.buffer();
    gemm(x.runtime(), Trans::no, Trans::no, filters_, columns, k, 1.f, w_.buffer(), w_.offset(), k,
         col_.buffer(), 0, columns, 0.f, cfb, 0, columns);
    ops_->output_forward(cf_, y, b_, g_, activation_, z);
  }
  x_last_ = x;
  y_last_ = y;
  y_skipped_ = false;
  return y;
}

bool Conv2D::pools_in_forward() const {
  return pool_after_ && pool_after_->size() == 2 && winograd_ops_ && winograd_for(rt_, g_) &&
         winograd_ops_->pools_output();
}

Tensor Conv2D::forward_pooled(const Tensor& x, const StepContext& ctx) {
  if (!pool_after_) throw ValidationError("Conv2D::forward_pooled: no MaxPool2D is linked after this layer");
  if (!pools_in_forward()) return pool_after_->forward(forward(x, ctx), ctx);
  if (x.cols() != g_.channels * g_.height * g_.width)
    throw ValidationError(fmt::format("Conv2D expects ({}, {}, {}) inputs, got {}", g_.channels, g_.height,
                                      g_.width, x.shape_string()));
  Tensor pooled = pool_after_->y_.rows(0, x.rows());
  winograd_ops_->forward_pooled(x, w_, b_, pooled, pool_after_->arg_, g_, activation_);
  x_last_ = x;
  y_last_ = Tensor();
  y_skipped_ = true;
  return pooled;
}

bool Conv2D::takes_pool_gradient(const MaxPool2D& pool) const {
  return ops_ && ops_->pools_in_output_stage() && activation_ != Activation::gelu && pool.size() >= 2 &&
         pool.size() == pool.stride();
}

void Conv2D::output_backward(const Tensor& dy, bool sum_bias) {
  const PoolGeometry* pg = pool_after_ ? &pool_after_->g_ : nullptr;
  // dy is the pool's gradient where Sequential::backward skipped the pool
  if (pg && dy.cols() == pg->channels * pg->out_h * pg->out_w) {
    const Tensor pooled = pool_after_->y_.rows(0, dy.rows());
    ops_->pooled_output_backward(pooled, pool_after_->arg_, dy, cf_, db_, g_, pool_after_->size(),
                                 activation_, sum_bias);
    return;
  }
  if (y_skipped_)
    throw ValidationError(
        "Conv2D backward: the last forward pass wrote the MaxPool2D's output, not this layer's; pass the "
        "pool's "
        "gradient");
  // gelu's derivative from z
  ops_->output_backward(z_.size() ? z_last_ : y_last_, dy, cf_, db_, g_, activation_, sum_bias);
}

// dy:(batch, F, OH, OW) → dz:(F, batch·P) and db; dW = dz·colᵀ; dx = col2im(Wᵀ·dz)
Tensor Conv2D::backward(Tensor& dy, const StepContext&, bool need_dx) {
  const size_t batch = dy.rows(), columns = batch * g_.plane(), k = g_.patch();
  Runtime& rt = dy.runtime();
  if (direct_for(&rt, k)) {  // dz channel-major in cf, then dW and db
    output_backward(dy, /*sum_bias=*/false);
    direct_ops().weight_grad(cf_, x_last_, dw_, db_, g_);
    return need_dx ? backward_dx(rt, batch) : Tensor();
  }
  if (winograd_dw_for(&rt, g_)) {  // dz channel-major in cf and db, then Winograd's dW
    output_backward(dy, /*sum_bias=*/true);
    {
      const detail::ConvDwGemmScope dw_set(rt);  // dW's own Xgemm set, where one is named
      winograd_ops().backward_dw(cf_, x_last_, dw_, g_, batch);
    }
    return need_dx ? backward_dx(rt, batch) : Tensor();
  }
  const size_t slices = dw_slices(batch), part = columns / slices;
  std::optional<detail::ConvDwGemmScope> dw_set(std::in_place, rt);  // dW's own Xgemm set, where one is named
  const DwLayout d = dw_layout(rt, k, part);
  const bool nn = slices == 1 && d.fp == filters_ && d.kp == k;  // nothing to pad (row-major): NN over dz
  // Where dW's columns are padded, colᵀ's first padding column is ones (colt_for): the GEMM then also
  // forms db = Σ dz as dW's column C·K·K, which the slices' sum takes out; otherwise the output stage
  // sums dz's rows as it writes them on PoCL (0.01 ms more for the reference CNN's conv 2), and a
  // kernel sums them after it elsewhere (2.6 ms on Intel's runtime; ConvOps::output_backward).
  const bool db_in_gemm = !nn && d.kp > k;
  output_backward(dy, /*sum_bias=*/!db_in_gemm);
  // dW = dz·colᵀ = (dzᵀ)ᵀ·colᵀ, a GEMM TN whose operands both have the batch's pixels as rows: dz's
  // rows from cf, colᵀ written from x (im2row, its columns in tap-major order: each tap row of a
  // patch is one run of channels-last x), each row padded as gemm_padding says, so that CLBlast
  // copies neither (its batched routine allocates every copy it makes, on every call). The slices'
  // sum puts the columns back in W's order; with one channel the orders agree.
  ops_->im2row(x_last_, reserve(xt_, dx_.size()), colt_for(columns, d.kp), g_, d.kp);
  if (nn) {
    Tensor& out = g_.channels == 1 ? dw_ : reserve(dw_parts_, filters_ * k);
    DeviceBuffer ob = out.buffer();
    gemm(rt, Trans::no, Trans::no, filters_, k, columns, 1.f, cf_.buffer(), 0, columns, colt_.buffer(), 0, k,
         0.f, ob, out.offset(), k);
    if (g_.channels != 1) ops_->sum_slices(dw_parts_, 1, filters_ * k, k, dw_, g_.channels);
  } else {  // dW_s = dz[:, slice s]·colᵀ[slice s, :] (padded), then dW = Σ_s dW_s in slice order
    ops_->dz_rows(cf_, reserve(dz_rows_, columns * d.fp), columns, filters_, d.fp);
    const size_t stride = d.fp * d.kp;
    DeviceBuffer parts = reserve(dw_parts_, slices * stride).buffer();
    if (detail::conv_dw_batched(rt, slices, d.fp, d.kp, part)) {
      gemm_strided_batched(rt, Trans::yes, Trans::no, d.fp, d.kp, part, 1.f, dz_rows_.buffer(), 0, d.fp,
                           part * d.fp, colt_.buffer(), 0, d.kp, part * d.kp, 0.f, parts, 0, d.kp, stride,
                           slices);
    } else {  // one GEMM per slice on the indirect kernel; the GEMM layer hands CLBlast sub-buffers
      for (size_t s = 0; s < slices; ++s)
        gemm(rt, Trans::yes, Trans::no, d.fp, d.kp, part, 1.f, dz_rows_.buffer(), s * part * d.fp, d.fp,
             colt_.buffer(), s * part * d.kp, d.kp, 0.f, parts, s * stride, d.kp);
    }
    ops_->sum_slices(dw_parts_, slices, stride, d.kp, dw_, g_.channels, db_in_gemm ? &db_ : nullptr);
  }
  dw_set.reset();  // dx on the model's set
  return need_dx ? backward_dx(rt, batch) : Tensor();
}

// dx = col2im(Wᵀ·dz) from dz in cf_, or Winograd's convolution of dz (winograd_dx_for).
Tensor Conv2D::backward_dx(Runtime& rt, size_t batch) {
  if (winograd_dx_for(&rt, g_)) {
    Tensor dx = dx_.rows(0, batch);
    winograd_ops().backward_dx(cf_, w_, dx, g_, batch);
    return dx;
  }
  const size_t columns = batch * g_.plane(), k = g_.patch();
  DeviceBuffer cb = reserve(col_, k * y_.rows() * g_.plane()).buffer();
  // dcol = Wᵀ·dz. Where gemm_padding pads C·K·K, W gets zero columns and dcol rows to match, so that
  // CLBlast neither copies W nor computes dcol into a temporary and copies it back.
  const size_t kx = dx_rows(rt, k, columns);
  if (kx == k) {
    gemm(rt, Trans::yes, Trans::no, k, columns, filters_, 1.f, w_.buffer(), w_.offset(), k, cf_.buffer(), 0,
         columns, 0.f, cb, 0, columns);
  } else {
    if (w_padded_.size() != filters_ * kx) {
      w_padded_ = Tensor(rt, {filters_ * kx});
      w_padded_.fill(0.f);
    }
    DeviceBuffer wpb = w_padded_.buffer();
    omatcopy(rt, Trans::no, filters_, k, w_.buffer(), w_.offset(), k, wpb, 0, kx);
    cb = reserve(col_, kx * columns).buffer();
    gemm(rt, Trans::yes, Trans::no, kx, columns, filters_, 1.f, wpb, 0, kx, cf_.buffer(), 0, columns, 0.f, cb,
         0, columns);
  }
  Tensor dx = dx_.rows(0, batch);
  ops_->col2im(col_, dx, g_);
  return dx;
}

}  // namespace anycl
