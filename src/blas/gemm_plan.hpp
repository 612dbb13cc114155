// The GEMM planner: for a GEMM on a runtime (its shape, transposes and where its operands live) it
// decides how CLBlast runs it — the layout of the call, the transposes a layer makes first, the
// dense dx layout, the convolutions' dW slices — from one private per-runtime state it owns, which
// the tuning file and the tuning database (`anyclDense`, `anyclConv` lines) set. Dense, Conv2D,
// the GEMM layer (blas.cpp) and the tuner's cost model ask it; nothing else decides.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "anycl/blas/blas.hpp"
#include "anycl/runtime.hpp"
#include "blas/clblast_params_lock.hpp"

namespace anycl::detail {

/// CLBlast's parameters behind each call's layout: the m·n·k from which CLBlast takes its indirect
/// kernel in the form that wants C column-major (0: not read yet; UINT64_MAX: never), and that
/// kernel's tile MWG × NWG.
struct GemmLayoutParams {
  uint64_t column_major_from = 0;
  uint32_t mwg = 1, nwg = 1;
  uint64_t generation = 0;  // clblast_params_generation() when read
};

/// The planner's state for one runtime (made on first use, freed with the runtime).
struct GemmState {
  /// The most slices of the batch a convolution's weight gradient of few output tiles is split into,
  /// unless a tuning database entry says otherwise (PoCL's CPU entries say 128, one sample a slice
  /// for the reference CNN, where 16 left conv 2's GEMM 9 ms slower).
  static constexpr size_t kDefaultDwSlices = 16;
  /// Dense layers compute dx = dz·Wᵀ as a transpose of W plus a GEMM NN rather than one GEMM NT:
  /// off by default; `anycl tune` turns it on for a device where it measured it faster.
  bool transposed_dx = false;
  /// A convolution's weight gradient split over slices runs as one strided-batched GEMM (on by
  /// default) or, where its slices run on CLBlast's indirect kernel, as one GEMM per slice: a tuning
  /// database entry turns it off for a device whose batched indirect GEMM is the slower (Intel's CPU
  /// runtime's entry, tuning/intel-cpu.txt).
  bool batched_dw = true;
  size_t dw_slices = kDefaultDwSlices;
  /// The shortest inner size (pixels of the batch) a slice of dW is cut to where a sample's plane is
  /// small: each slice's C is written, then read again by the slices' sum, so slices of few pixels
  /// cost more in that traffic than their work-groups gain (the BatchNorm CNN's conv 3, 10×10
  /// outputs, on PoCL's AVX-512 entry: 128 slices of 100 pixels, 8.7 → 6.5 ms in 16 of 800).
  static constexpr size_t kDefaultDwMinSliceColumns = 512;
  size_t dw_min_slice_columns = kDefaultDwMinSliceColumns;
  /// The Xgemm set the convolutions' weight gradients run with (ConvDwGemmScope), where a tuning's
  /// `anyclConvDwXgemm` line names one; empty: the set every other GEMM runs with.
  std::map<std::string, size_t> dw_xgemm;
  /// The Xgemm set Dense layers' forward products run with (DenseForwardGemmScope), where a tuning's
  /// `anyclDenseXgemm` line names one; empty: the set every other GEMM runs with.
  std::map<std::string, size_t> dense_xgemm;
  /// The Xgemm set Winograd's per-plane products run with (ConvWinogradGemmScope), where a tuning's
  /// `anyclConvWinogradXgemm` line names one; empty: the set every other GEMM runs with.
  std::map<std::string, size_t> winograd_xgemm;
  /// What the GEMM layer read from CLBlast; read again after any change of CLBlast's parameters in the
  /// process (its generation), or once forgotten ({}).
  GemmLayoutParams layout;
  /// tune() stored and applied a tuning of the device's own on this runtime: building a model no
  /// longer switches to the database's sets for it (apply_model_tuning), whatever it ran at start.
  bool tuned_here = false;
};

/// The runtime's GEMM state.
GemmState& gemm_state(Runtime& rt);
/// Sets the most dW slices; 0 means the default.
void set_most_dw_slices(Runtime& rt, size_t most);

/// The tuning's own lines: "anyclDense" {TRANSPOSED_DX}, "anyclConv" {BATCHED_DW, DW_SLICES},
/// "anyclConvDwXgemm", "anyclDenseXgemm" and "anyclConvWinogradXgemm" {an Xgemm set, or nothing}.
inline constexpr const char* kDenseChoices = "anyclDense";
inline constexpr const char* kConvChoices = "anyclConv";
inline constexpr const char* kConvDwXgemm = "anyclConvDwXgemm";
inline constexpr const char* kDenseXgemm = "anyclDenseXgemm";
inline constexpr const char* kConvWinogradXgemm = "anyclConvWinogradXgemm";
/// Every one of those lines.
inline constexpr const char* kGemmChoices[] = {kDenseChoices, kConvChoices, kConvDwXgemm, kDenseXgemm,
                                               kConvWinogradXgemm};
/// Whether `kernel` names one of those lines rather than a CLBlast kernel.
bool is_gemm_choice(const std::string& kernel);
/// Sets the runtime's state from such a line (a parameter it lacks takes its default).
void apply_gemm_choice(Runtime& rt, const std::string& kernel, const std::map<std::string, size_t>& params);
/// Whether the runtime's state already is what such a line says.
bool holds_gemm_choice(Runtime& rt, const std::string& kernel, const std::map<std::string, size_t>& params);
/// After CLBlast's parameters changed: the layout is read from CLBlast again at the next call.
void forget_gemm_layout(Runtime& rt);

// The layout of each CLBlast call (blas.cpp).

/// CLBlast's parameters as the calls are laid out by, read once per runtime and tuning.
const GemmLayoutParams& layout_params(Runtime& rt);
/// Whether an m×n×k GEMM is better asked of CLBlast column-major (see blas.cpp's gemm_impl).
bool column_major_call(Runtime& rt, size_t m, size_t n, size_t k);
/// Whether CLBlast runs an m×n×k product on its indirect kernel in the GEMMK=0 form, which reads
/// op(A) without a copy only where A is given transposed.
bool reads_a_transposed(Runtime& rt, size_t m, size_t n, size_t k);
/// Whether an indirect kernel with these Xgemm parameters reads A transposed (GEMMK=0): the tuner
/// asks for a set it has not applied.
bool kernel_reads_a_transposed(const std::map<std::string, size_t>& xgemm);
/// The multiples to pad C to so that CLBlast copies no operand (gemm_padding).
GemmPadding padding(Runtime& rt, size_t m, size_t n, size_t k);

// Dense (src/nn/dense.cpp): y = x·W is batch×units×in; dx = dz·Wᵀ is batch×in×units.

/// Whether the forward product runs as anycl's transpose of x, then a GEMM TN.
bool dense_forward_as_tn(Runtime& rt, size_t batch, size_t units, size_t in);
/// How dx runs on the runtime (DenseDxForm, blas.hpp).
DenseDxForm dense_dx(Runtime& rt, size_t batch, size_t in, size_t units);
/// Whether dW = xᵀ·dz (in×units×batch) runs turned round, as dWᵀ = dzᵀ·x and anycl's transpose
/// after it: on the indirect kernel's GEMMK=0 form, where CLBlast would copy dW into a temporary
/// (asked row-major, or its tiles not whole) while dWᵀ is asked column-major in whole tiles.
bool dense_dw_turned(Runtime& rt, size_t batch, size_t in, size_t units);
/// Whether a Dense layer built now keeps a Wᵀ for its dx.
bool dense_keeps_wt(Runtime& rt);

// Split-K: a product of few output tiles and a long inner size, as slices of k summed in order.

/// Slices of k that an m×n×k product (C row-major, whole tiles of the indirect kernel) runs as, one
/// strided-batched GEMM over them and an ordered sum after it, on a CPU: where C has fewer tiles of
/// the kernel that runs it (the indirect kernel's MWG × NWG, else 64×64) than 4 × the device's
/// compute units and k > 16·max(m, n) (DLPrimitives' rule); as many slices as give 8 work-groups a
/// compute unit, at most 16, each slice's k a multiple of 64. 1 where not split. The tuner still
/// times such a product whole (Dense::gemm_shapes).
size_t split_k_slices(Runtime& rt, size_t m, size_t n, size_t k);
/// Where split_k_slices refuses a product only because C's columns are not whole tiles: the slices of
/// Cᵀ = Bᵀ·Aᵀ instead, with A's m rows padded to `padded_m` (whole tiles, at most twice m; the caller
/// lays out Aᵀ so), each slice's Cᵀ n × padded_m, summed into C transposed. {1, 0} where not.
struct SplitKTransposed {
  size_t slices = 1, padded_m = 0;
};
SplitKTransposed split_k_transposed(Runtime& rt, size_t m, size_t n, size_t k);

/// While it lives, CLBlast's Xgemm runs with `set` (one a tuning names for some products) and the GEMM
/// layer lays calls out by that set's tiles (the layout is read again at each change); then the set
/// before it is back. Nothing where `set` is empty.
/// CLBlast's parameters are the process's, not the runtime's: while a scope changes them it holds
/// ClblastParamsChange, so scopes are taken one at a time, each puts back what it found, and every
/// other thread's CLBlast call waits for it and runs on the set it would have run on without it.
class XgemmSetScope {
 public:
  XgemmSetScope(Runtime& rt, const std::map<std::string, size_t>& set);
  ~XgemmSetScope();
  XgemmSetScope(const XgemmSetScope&) = delete;
  XgemmSetScope& operator=(const XgemmSetScope&) = delete;

 private:
  Runtime& rt_;
  std::optional<ClblastParamsChange> change_;
  std::map<std::string, size_t> before_;  // empty: nothing was changed
};

/// A Dense layer's forward product (batch × units) on the runtime's Dense set (GemmState::dense_xgemm),
/// where the tuning names one and C is whole tiles of that set's indirect kernel but not of the set in
/// force: the AVX-512 entry's 96-wide `large` tiles pad the reference CNN's batch of 128 to 192 in its
/// first Dense layer's product, its 128 × 64 ones pad nothing. Elsewhere nothing changes: a change of
/// set costs the host about 0.5 ms each way (CLBlast's OverrideParameters on PoCL).
class DenseForwardGemmScope : public XgemmSetScope {
 public:
  DenseForwardGemmScope(Runtime& rt, size_t batch, size_t units);
};

// Conv2D's weight gradient dW:(filters, patch), inner size the batch's pixels (src/nn/conv2d.cpp).

/// Conv2D's weight gradient (im2row's GEMM, or Winograd's along x, whose 3C columns are 96 for the
/// reference CNN's conv 2) on the runtime's dW set (GemmState::dw_xgemm), where the tuning names one. A
/// tile that divides the patch saves the padding another set's tiles need (the reference CNN's conv 2
/// under the AVX2 entry's 128-wide tiles: 289 columns padded to 384).
class ConvDwGemmScope : public XgemmSetScope {
 public:
  explicit ConvDwGemmScope(Runtime& rt);
};

/// One of Winograd's per-plane products, m × n × k (m: the filters of the pass, n: its tiles; C column-
/// major), on the runtime's Winograd set (GemmState::winograd_xgemm) where the tuning names one and its
/// tiles pad C less than the set in force: the reference CNN's conv 2 input gradient has m = 32 (conv
/// 2's channels), which the AVX-512 entry's 96 × 64 tiles pad to 64, its 128 × 32 ones not at all
/// (11.6 → 6.5 ms a step in its 36 products on Zen 5). Elsewhere nothing changes (a change of set costs
/// the host about 0.5 ms each way).
class ConvWinogradGemmScope : public XgemmSetScope {
 public:
  ConvWinogradGemmScope(Runtime& rt, size_t m, size_t n, size_t k);
};
/// The padding (gemm_padding) of such a product on the set its scope runs it with, without changing
/// CLBlast's parameters: Winograd's layout, wherever it is computed.
GemmPadding winograd_padding(Runtime& rt, size_t m, size_t n, size_t k);

/// Whether dW has so few 64×64 output tiles that it is split over slices of the batch.
bool conv_dw_splits(size_t filters, size_t patch);
/// Slices of whole samples for dW at `batch` rows of `plane` output pixels each: the largest divisor
/// of the batch up to `most` (the runtime's bound; its default without a runtime) whose slices are
/// each at least GemmState::dw_min_slice_columns pixels long; 1 where dW is not split.
size_t conv_dw_slices(Runtime* rt, size_t filters, size_t patch, size_t plane, size_t batch);
/// The most slices any batch up to `max_batch` takes (room for the slices' parts).
size_t conv_most_dw_slices(Runtime& rt, size_t filters, size_t patch, size_t plane, size_t max_batch);
/// Whether `slices` parts of fp×kp×part run as one strided-batched GEMM rather than one GEMM each.
bool conv_dw_batched(Runtime& rt, size_t slices, size_t fp, size_t kp, size_t part);

}  // namespace anycl::detail
