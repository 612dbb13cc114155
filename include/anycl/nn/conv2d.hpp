// Conv2D over NCHW images: y = act(W ⊛ x + b) (cross-correlation, as Keras), through an im2col of
// the whole batch and one CLBlast GEMM per pass (or CLBlast's Convgemm for the forward pass), or,
// for a patch too short for a GEMM, direct kernels for the forward pass and the weight gradient, or
// for a 3×3 kernel at stride 1, Winograd's F(4×4, 3×3) forward pass around 36 GEMMs.
// W is stored (filters, C, K, K) row-major, as ONNX's Conv expects it, then b (filters).
#pragma once

#include <memory>

#include "anycl/nn/geometry.hpp"
#include "anycl/nn/layer.hpp"
#include "anycl/nn/registry.hpp"

namespace anycl {

class BiasActivation;   // src/ops/activation.hpp
class ConvOps;          // src/ops/conv.hpp
class ConvDirectOps;    // src/ops/conv_direct.hpp
class ConvWinogradOps;  // src/ops/conv_winograd.hpp
class MaxPool2D;        // maxpool2d.hpp

enum class Padding { valid = 0, same = 1 };

/// How Conv2D runs its forward pass and weight gradient: our whole-batch im2col + one CLBlast GEMM
/// per pass; CLBlast's Convgemm forward (symmetric padding only; otherwise im2col is used); direct:
/// where the patch C·K·K is at most kDirectMaxPatch (the reference CNN's first layer, k = 9), direct
/// kernels (conv_direct.cl) for the forward pass and the weight gradient — no GEMM, dx still a GEMM —
/// and im2col_gemm for a longer patch; winograd: for a 3×3 kernel at stride 1, the forward pass as
/// Winograd's F(4×4, 3×3) (conv_winograd.cl: 36 products of F × C by C × tiles, a GEMM each,
/// 4 times fewer multiplications than im2col's), dx the same way, dW as im2col_gemm's, and
/// im2col_gemm for any other kernel or stride; or automatic (the default): on a CPU device direct for
/// a short patch, else winograd where it applies, else im2col_gemm; im2col_gemm on other devices
/// (direct and winograd are not yet measured on a GPU). `anycl bench cnn --conv-forward` measures them.
enum class ConvForward { im2col_gemm, convgemm, direct, automatic, winograd };

class Conv2D final : public Layer {
 public:
  /// `filters` output channels, a square `kernel`, `stride`, valid or same padding.
  Conv2D(size_t filters, size_t kernel, size_t stride = 1, Padding padding = Padding::valid,
         Activation activation = Activation::relu, Init init = Init::glorot_uniform);
  ~Conv2D() override;
  size_t filters() const noexcept { return filters_; }
  size_t kernel() const noexcept { return kernel_; }
  size_t stride() const noexcept { return stride_; }
  Padding padding() const noexcept { return padding_; }
  Activation activation() const noexcept { return activation_; }
  Init init() const noexcept { return init_; }
  /// The geometry for a (C, H, W) input; ValidationError when the input is not an image or too small.
  ConvGeometry geometry(const Shape& input) const;
  /// The longest patch C·K·K that ConvForward::direct and automatic run directly (a GEMM's inner size shorter
  /// than a tile of it: CLBlast pads k = 9 to 16 and moves a 9-row column matrix).
  static constexpr size_t kDirectMaxPatch = 32;
  /// Chooses the forward algorithm (default automatic).
  void set_forward(ConvForward f) noexcept { forward_algo_ = f; }
  /// Whether the forward pass and weight gradient run as direct kernels (no GEMM) for `input` on
  /// `rt`'s device, as the chosen algorithm says.
  bool uses_direct(const Runtime* rt, const Shape& input) const;
  /// Whether the forward pass runs as Winograd's F(4×4, 3×3) for `input` on `rt`'s device, as the
  /// chosen algorithm says (its dx and dW are then Winograd's too).
  bool uses_winograd(const Runtime* rt, const Shape& input) const;
  /// Into how many slices of the batch the weight gradient's im2row GEMM is split at `batch` rows (not
  /// where it is Winograd's, which slices its blocks): 1 for
  /// a large weight matrix; for a small one (the first layer's 32×9), up to the runtime's
  /// dw_slices() (16 before build()) slices of whole samples, so that the long inner size is spread
  /// over many work-groups, not one.
  size_t dw_slices(size_t batch) const noexcept;

  /// The Layer interface (layer.hpp) over (C, H, W) inputs.
  const LayerType& type() const override;
  std::string args() const override;
  std::string summary_note() const override;
  Shape output_shape(const Shape& input) const override;
  using Layer::parameter_count;
  size_t parameter_count(const Shape& input) const override;
  size_t activation_floats(const Shape& input) const override;
  size_t scratch_floats(const Shape& input, size_t batch, Runtime& rt) const override;
  std::vector<GemmShape> gemm_shapes(const Shape& input, size_t batch, bool need_dx,
                                     Runtime* rt) const override;
  void build(Runtime& rt, const Shape& input, size_t max_batch, Tensor params, Tensor grads,
             uint32_t index) override;
  void initialize(uint64_t seed) override;
  Tensor forward(const Tensor& x, const StepContext& ctx) override;
  Tensor backward(Tensor& dy, const StepContext& ctx, bool need_dx) override;
  /// Whether this built layer's backward can take the gradient of `pool` right after it and route it
  /// itself (ConvOps::pooled_output_backward): non-overlapping windows of at least 2, an activation other
  /// than gelu, a CPU driver.
  bool takes_pool_gradient(const MaxPool2D& pool) const;
  /// Whether forward_pooled() pools in this layer's output stage: a linked 2×2 MaxPool2D after a Winograd
  /// forward pass on a CPU driver (elsewhere forward_pooled() runs the two layers' passes one after the
  /// other).
  bool pools_in_forward() const;
  /// This layer's forward pass and that of the MaxPool2D Sequential linked after it (pool_after_): the
  /// pool's output (its tensor). Where pools_in_forward(), this layer's output y is not written.
  Tensor forward_pooled(const Tensor& x, const StepContext& ctx);

 private:
  friend class Sequential;  // links a MaxPool2D after it (pool_after_)
  size_t filters_, kernel_, stride_;
  Padding padding_;
  Activation activation_;
  Init init_;
  ConvForward forward_algo_ = ConvForward::automatic;
  ConvGeometry g_;
  uint32_t index_ = 0;
  Runtime* rt_ = nullptr;   // the runtime build() was given: its GEMM planner bounds the split
  Tensor w_, b_, dw_, db_;  // views into the model's flat buffers
  Tensor y_, dx_;           // (max_batch, F, OH, OW), (max_batch, C, H, W)
  Tensor col_;       // (C·K·K, batch·OH·OW) (flat): im2col of x in the forward pass, dcol in the backward
                     // (dx_rows() rows there: the padding rows are written, never read)
  Tensor w_padded_;  // (F, dx_rows()): W with zero columns, dcol's A when dx_rows() pads C·K·K
  Tensor colt_;      // (batch·OH·OW, kp) (flat): im2row of x (tap-major), for the weight gradient's GEMM
  Tensor xt_;        // (batch, H, W, C): x in channels-last order, im2row's source
  size_t colt_zeroed_ld_ = 0;  // the row length colt_'s padding columns were zeroed for (0: not yet)
  Tensor cf_;       // (F, batch·OH·OW): the forward GEMM's result, then dz for the backward GEMMs
  Tensor dz_rows_;  // (batch·OH·OW, fp) (flat): dzᵀ, for the weight gradient's GEMM
  // The weight gradient per slice of the batch (see dw_slices()), (slices, fp, kp), then summed in
  // slice order into dW by a kernel.
  Tensor dw_parts_;
  // dW's padded sizes: F to fp and C·K·K to kp, as gemm_padding asks for CLBlast to copy nothing.
  struct DwLayout {
    size_t fp, kp;
  };
  DwLayout dw_layout(Runtime& rt, size_t patch, size_t part) const;
  // dcol's rows: C·K·K (`patch`) padded as gemm_padding asks for dcol = Wᵀ·dz over `columns` pixels.
  size_t dx_rows(Runtime& rt, size_t patch, size_t columns) const;
  Tensor& reserve(Tensor& t, size_t floats);
  // colt_ for `columns` rows of kp floats, its padding columns zero (im2row writes only the patch).
  Tensor& colt_for(size_t columns, size_t kp);
  Tensor x_last_, y_last_;
  Tensor z_, z_last_;  // gelu only (activation_keeps_input): the output before the activation, as y_
  std::unique_ptr<ConvOps> ops_;
  MaxPool2D* pool_after_ = nullptr;  // the MaxPool2D right after it, whose backward its output stage runs
  bool y_skipped_ = false;           // the last forward pass pooled in its output stage: y_ not written
  // dz in cf_ from dy, with db where sum_bias: dy is the gradient of this layer's output, or (where
  // Sequential::backward skipped pool_after_) of the pool's, which is smaller (windows of 2 and more)
  void output_backward(const Tensor& dy, bool sum_bias);
  std::unique_ptr<ConvDirectOps> direct_ops_;      // made by build() or on first use
  std::unique_ptr<ConvWinogradOps> winograd_ops_;  // likewise, with its scratch
  std::unique_ptr<BiasActivation> bias_act_;
  ConvDirectOps& direct_ops();
  bool direct_for(const Runtime* rt, size_t patch) const;             // uses_direct() for this patch
  bool winograd_for(const Runtime* rt, const ConvGeometry& g) const;  // uses_winograd() for g
  // whether dx, too, is Winograd's: wherever the forward pass is
  bool winograd_dx_for(const Runtime* rt, const ConvGeometry& g) const;
  // and dW: wherever the forward pass is (no column matrix, no GEMM path scratch)
  bool winograd_dw_for(const Runtime* rt, const ConvGeometry& g) const;
  ConvWinogradOps& winograd_ops();
  Tensor backward_dx(Runtime& rt, size_t batch);  // dx = col2im(Wᵀ·dz), dz in cf_
};

/// The registry entry: "conv2d FILTERS KERNEL STRIDE PADDING ACTIVATION INIT"; `--layers` tokens
/// convFxK[sS][same] (e.g. conv32x3, conv64x3s2same) with the flags' activation and init; ONNX Conv.
const LayerType& conv2d_layer_type();
/// "valid" / "same", and back (ValidationError otherwise).
const char* to_string(Padding p) noexcept;
Padding parse_padding(const std::string& text);

}  // namespace anycl
