// The GEMM planner (gemm_plan.hpp): every choice of how a GEMM runs, from the runtime's GEMM state.
#include "blas/gemm_plan.hpp"

#include <clblast.h>

#include <algorithm>
#include <iterator>
#include <memory>

#include "anycl/error.hpp"
#include "blas/clblast_params.hpp"
#include "blas/clblast_params_lock.hpp"

namespace anycl::detail {
namespace {

constexpr const char* kTransposedDx = "TRANSPOSED_DX";
constexpr const char* kBatchedDw = "BATCHED_DW";
constexpr const char* kDwSlices = "DW_SLICES";

// dW is split when it has fewer than kSplitDwMaxTiles tiles of kSplitDwTile² (the first layer's 32×9
// is one, the reference CNN's 64×288 five): a CPU device's cores then have too few work-groups to
// share (conv 2 on PoCL: 86 → 73 ms a step with 16 slices; 38 → 27 ms plus 0.8 ms more summing with
// 128 on AVX-512).
constexpr size_t kSplitDwTile = 64, kSplitDwMaxTiles = 32;

// Split-K (split_k_slices): tiles of 64×64 off the indirect kernel, at most 16 slices of k, each a
// multiple of 64.
constexpr size_t kSplitKTile = 64, kSplitKMostSlices = 16, kSplitKStep = 64;

bool flag(const std::map<std::string, size_t>& params, const char* key, bool otherwise) {
  const auto it = params.find(key);
  return it == params.end() ? otherwise : it->second != 0;
}

size_t most_slices(const std::map<std::string, size_t>& params) {
  const auto it = params.find(kDwSlices);
  return it == params.end() || it->second == 0 ? GemmState::kDefaultDwSlices : it->second;
}

}  // namespace

GemmState& gemm_state(Runtime& rt) {
  if (!rt.gemm_state_) rt.gemm_state_ = std::make_shared<GemmState>();
  return *rt.gemm_state_;
}

void set_most_dw_slices(Runtime& rt, size_t most) {
  gemm_state(rt).dw_slices = most > 0 ? most : GemmState::kDefaultDwSlices;
}

bool is_gemm_choice(const std::string& kernel) {
  return std::find(std::begin(kGemmChoices), std::end(kGemmChoices), kernel) != std::end(kGemmChoices);
}

void apply_gemm_choice(Runtime& rt, const std::string& kernel, const std::map<std::string, size_t>& params) {
  GemmState& s = gemm_state(rt);
  if (kernel == kDenseChoices) {
    s.transposed_dx = flag(params, kTransposedDx, false);
  } else if (kernel == kConvChoices) {
    s.batched_dw = flag(params, kBatchedDw, true);
    s.dw_slices = most_slices(params);
  } else if (kernel == kConvDwXgemm) {
    s.dw_xgemm = params;
  } else if (kernel == kDenseXgemm) {
    s.dense_xgemm = params;
  } else if (kernel == kConvWinogradXgemm) {
    s.winograd_xgemm = params;
  }
}

bool holds_gemm_choice(Runtime& rt, const std::string& kernel, const std::map<std::string, size_t>& params) {
  const GemmState& s = gemm_state(rt);
  if (kernel == kDenseChoices) return s.transposed_dx == flag(params, kTransposedDx, false);
  if (kernel == kConvChoices)
    return s.batched_dw == flag(params, kBatchedDw, true) && s.dw_slices == most_slices(params);
  if (kernel == kConvDwXgemm) return s.dw_xgemm == params;
  if (kernel == kDenseXgemm) return s.dense_xgemm == params;
  if (kernel == kConvWinogradXgemm) return s.winograd_xgemm == params;
  return false;
}

void forget_gemm_layout(Runtime& rt) { gemm_state(rt).layout = {}; }

const GemmLayoutParams& layout_params(Runtime& rt) {
  GemmLayoutParams& layout = gemm_state(rt).layout;
  if (layout.column_major_from == 0 || layout.generation != clblast_params_generation()) {
    const ClblastParamsUse one_set;                   // not another thread's dW set or half-applied tuning
    layout.generation = clblast_params_generation();  // no change runs while the lock is held
    std::map<std::string, size_t> routine, xgemm;
    const auto& device = rt.info().id;
    const bool known =
        clblast_params::retrieve(device, "GemmRoutine", routine) == clblast::StatusCode::kSuccess &&
        clblast_params::retrieve(device, "Xgemm", xgemm) == clblast::StatusCode::kSuccess;
    const uint64_t size = std::min<uint64_t>(routine["XGEMM_MIN_INDIRECT_SIZE"], uint64_t{1} << 21);
    // Unknown parameters: row-major always, as CLBlast was asked before (and not asked again per call).
    layout.column_major_from =
        known && xgemm["GEMMK"] == 0 ? std::max<uint64_t>(size * size * size, 1) : UINT64_MAX;
    layout.mwg = uint32_t(std::clamp<size_t>(xgemm["MWG"], 1, 1024));
    layout.nwg = uint32_t(std::clamp<size_t>(xgemm["NWG"], 1, 1024));
  }
  return layout;
}

// Where CLBlast 1.5 takes its indirect kernel (m·n·k from XGEMM_MIN_INDIRECT_SIZE³ on) in its GEMMK=0
// form, which wants C column-major, unless the swap costs more than it saves: the kernel computes whole
// MWG × NWG tiles, and m and n trade places (the reference MLP's output layer, n = 10: asked
// column-major, 10 rows padded to MWG = 128 cost twice the tiles of 10 columns padded to NWG = 64,
// where C's transpose back is only 128×10), while asked row-major it computes C into a temporary it
// copies in and out, costed as kCopyMacs multiply-adds an element of C (conv 2's dX under a 96 × 64
// tile: 11 % fewer tiles row-major, 24.0 → 44.5 ms a step with the copies, docs/dev/performance-log.md).
// Its GEMMK=1 form wants C row-major and is left row-major.
namespace {
bool column_major_under(const GemmLayoutParams& layout, size_t m, size_t n, size_t k) {
  if (uint64_t(m) * n * k < layout.column_major_from) return false;
  constexpr double kCopyMacs = 32;
  auto work = [&](uint64_t rows, uint64_t cols) {  // multiply-adds of whole tiles, C's rows on MWG
    const uint64_t tiles = ((rows + layout.mwg - 1) / layout.mwg) * ((cols + layout.nwg - 1) / layout.nwg);
    return double(tiles) * layout.mwg * layout.nwg * double(k);
  };
  return work(n, m) <= work(m, n) + kCopyMacs * double(m) * double(n);
}
}  // namespace

bool column_major_call(Runtime& rt, size_t m, size_t n, size_t k) {
  return column_major_under(layout_params(rt), m, n, k);
}

bool reads_a_transposed(Runtime& rt, size_t m, size_t n, size_t k) {
  return m != 0 && n != 0 && uint64_t(m) * n * k >= layout_params(rt).column_major_from;
}

bool kernel_reads_a_transposed(const std::map<std::string, size_t>& xgemm) {
  const auto it = xgemm.find("GEMMK");
  return it != xgemm.end() && it->second == 0;
}

GemmPadding padding(Runtime& rt, size_t m, size_t n, size_t k) {
  if (m == 0 || n == 0 || !column_major_call(rt, m, n, k)) return {};
  const GemmLayoutParams& layout = layout_params(rt);
  return {layout.nwg, layout.mwg};
}

bool dense_forward_as_tn(Runtime& rt, size_t batch, size_t units, size_t in) {
  return reads_a_transposed(rt, batch, units, in);
}

DenseDxForm dense_dx(Runtime& rt, size_t batch, size_t in, size_t units) {
  // The indirect kernel's GEMMK=0 form reads A transposed: Wᵀ and dzᵀ by anycl's kernel, then TN,
  // whatever the dx layout; elsewhere the layout `anycl tune` measured faster.
  if (reads_a_transposed(rt, batch, in, units)) return DenseDxForm::transposes_gemm_tn;
  return gemm_state(rt).transposed_dx ? DenseDxForm::transpose_w_gemm_nn : DenseDxForm::gemm_nt;
}

bool dense_dw_turned(Runtime& rt, size_t batch, size_t in, size_t units) {
  // The reference CNN's first Dense layer under PoCL's AVX-512 `large` sets: dW is 9,216 × 128, asked
  // row-major (its 128 units would fall on 96-wide tiles), so CLBlast computed it into a temporary it
  // copied in and out (3.9 ms a step on Zen 5), while dWᵀ's GEMM is dx's shape (1.6 ms) and the
  // transpose 0.6.
  if (in == 0 || units == 0 || !reads_a_transposed(rt, in, units, batch)) return false;
  auto copies_nothing = [&](size_t m, size_t n) {  // asked column-major, C in whole tiles
    if (!column_major_call(rt, m, n, batch)) return false;
    const GemmPadding pad = padding(rt, m, n, batch);
    return m % pad.m == 0 && n % pad.n == 0;
  };
  return !copies_nothing(in, units) && copies_nothing(units, in);
}

bool dense_keeps_wt(Runtime& rt) { return gemm_state(rt).transposed_dx; }

namespace {
// The slices of k an m×n×k product asks for (split_k_slices), before its C is checked for whole tiles.
size_t split_k_wanted(Runtime& rt, size_t m, size_t n, size_t k) {
  // The reference CNN's first Dense layer forward, 128×128×9216: 2 tiles of the PoCL AVX-512 entry's
  // 128×64 indirect kernel for 0.3 GFLOP, each work-group walking all of k (27 GFLOP/s, against
  // 78 for conv 2's forward beside it). Intel's entry has 64×32 tiles, 8 there: not split (split
  // anyway, that product took 1.1–1.5x its time).
  const DeviceInfo& info = rt.info();
  if (info.type != DeviceType::cpu || m == 0 || n == 0) return 1;
  // The tiles of the kernel that runs it: the indirect kernel's (C column-major where
  // column_major_call says so), else 64×64.
  auto tiles_of = [](size_t rows, size_t cols, size_t mwg, size_t nwg) {
    return ((rows + mwg - 1) / mwg) * ((cols + nwg - 1) / nwg);
  };
  const GemmLayoutParams& layout = layout_params(rt);
  const bool indirect = uint64_t(m) * n * k >= layout.column_major_from;
  const size_t tiles = !indirect                        ? tiles_of(m, n, kSplitKTile, kSplitKTile)
                       : column_major_call(rt, m, n, k) ? tiles_of(n, m, layout.mwg, layout.nwg)
                                                        : tiles_of(m, n, layout.mwg, layout.nwg);
  const size_t units = std::max<size_t>(info.compute_units, 1);
  if (tiles >= 4 * units || k <= 16 * std::max(m, n)) return 1;
  // 8 work-groups a core once split: 8 slices of 1,152 on 2 cores cut that forward to about a third
  // (2 slices: 0.9 of it, 4: 0.6; 16 as 8), docs/dev/performance-log.md.
  size_t slices = std::min((8 * units + tiles - 1) / tiles, kSplitKMostSlices);
  while (slices > 1 && (k % slices != 0 || (k / slices) % kSplitKStep != 0)) --slices;
  return slices;
}
}  // namespace

size_t split_k_slices(Runtime& rt, size_t m, size_t n, size_t k) {
  const size_t slices = split_k_wanted(rt, m, n, k);
  if (slices == 1) return 1;
  // Whole tiles of C where the slices run on the indirect kernel, or its batched routine would
  // allocate a padded copy of C on every call (a last, smaller batch runs unsplit).
  const GemmPadding pad = padding(rt, m, n, k / slices);
  return m % pad.m == 0 && n % pad.n == 0 ? slices : 1;
}

SplitKTransposed split_k_transposed(Runtime& rt, size_t m, size_t n, size_t k) {
  // The reference CNN's first Dense layer forward under PoCL's AVX-512 `large` sets: 128 units on
  // 96-wide tiles, so split_k_slices refuses it and CLBlast ran it whole, padding and copying its
  // operands (7.1 ms a step). Turned round, the 96-wide side is the batch, which anycl pads itself.
  const size_t slices = split_k_wanted(rt, m, n, k);
  // Only where Cᵀ is asked column-major, whose tiles its padding fits (row-major, CLBlast would copy).
  if (slices == 1 || split_k_slices(rt, m, n, k) > 1 || !column_major_call(rt, n, m, k / slices)) return {};
  const GemmPadding pad = padding(rt, n, m, k / slices);  // Cᵀ: n × m
  const size_t padded = (m + pad.n - 1) / pad.n * pad.n;
  if (n % pad.m != 0 || padded > 2 * m) return {};
  return {slices, padded};
}

namespace {
void override_xgemm(Runtime& rt, const std::map<std::string, size_t>& params) {
  const clblast::StatusCode status = clblast_params::override_parameters(rt.info().id, "Xgemm", params);
  if (status != clblast::StatusCode::kSuccess)
    throw OpenCLError(int(status), "clblast::OverrideParameters",
                      "an Xgemm set a tuning names for some products (anyclConvDwXgemm, anyclDenseXgemm, "
                      "anyclConvWinogradXgemm)");
}
}  // namespace

XgemmSetScope::XgemmSetScope(Runtime& rt, const std::map<std::string, size_t>& set) : rt_(rt) {
  if (set.empty()) return;
  change_.emplace();  // other threads' CLBlast calls wait until the set is back
  std::map<std::string, size_t> now;
  if (clblast_params::retrieve(rt.info().id, "Xgemm", now) != clblast::StatusCode::kSuccess || now == set)
    return;                 // unreadable: left as it is; or the set already (a scope inside another)
  override_xgemm(rt, set);  // the layout is read again, from this set (its generation)
  before_ = std::move(now);
}

XgemmSetScope::~XgemmSetScope() {
  if (before_.empty()) return;
  try {
    override_xgemm(rt_, before_);
  } catch (...) {  // a destructor must not throw; the next tuning applied sets Xgemm again
  }
}

namespace {
const std::map<std::string, size_t> kNoSet;
// The Dense set where it makes batch × units whole tiles and the set in force does not; else none.
const std::map<std::string, size_t>& dense_forward_set(Runtime& rt, size_t batch, size_t units) {
  const std::map<std::string, size_t>& set = gemm_state(rt).dense_xgemm;
  if (set.empty() || !set.count("MWG") || !set.count("NWG")) return kNoSet;
  const auto whole = [&](size_t mwg, size_t nwg) {
    return mwg > 0 && nwg > 0 &&
           ((batch % mwg == 0 && units % nwg == 0) || (units % mwg == 0 && batch % nwg == 0));
  };
  const GemmLayoutParams& now = layout_params(rt);
  return whole(set.at("MWG"), set.at("NWG")) && !whole(now.mwg, now.nwg) ? set : kNoSet;
}
}  // namespace

DenseForwardGemmScope::DenseForwardGemmScope(Runtime& rt, size_t batch, size_t units)
    : XgemmSetScope(rt, dense_forward_set(rt, batch, units)) {}

ConvDwGemmScope::ConvDwGemmScope(Runtime& rt) : XgemmSetScope(rt, gemm_state(rt).dw_xgemm) {}

namespace {
// The Winograd set where C, asked column-major under it and under the set in force, is fewer padded
// elements on its tiles; else none. Under the set in force the layout is read from CLBlast; the set's
// own is taken from it with the set's tiles (its switch to the indirect kernel is the routine's, not
// the set's).
const std::map<std::string, size_t>& winograd_set(Runtime& rt, size_t m, size_t n, size_t k) {
  const std::map<std::string, size_t>& set = gemm_state(rt).winograd_xgemm;
  if (set.empty() || !set.count("MWG") || !set.count("NWG") || !kernel_reads_a_transposed(set)) return kNoSet;
  const GemmLayoutParams& now = layout_params(rt);
  GemmLayoutParams own = now;
  own.mwg = uint32_t(std::clamp<size_t>(set.at("MWG"), 1, 1024));
  own.nwg = uint32_t(std::clamp<size_t>(set.at("NWG"), 1, 1024));
  if (!column_major_under(now, m, n, k) || !column_major_under(own, m, n, k)) return kNoSet;
  const auto padded = [&](const GemmLayoutParams& tiles) {  // C column-major: m on NWG, n on MWG
    const auto whole = [](uint64_t size, uint64_t tile) { return (size + tile - 1) / tile * tile; };
    return whole(m, tiles.nwg) * whole(n, tiles.mwg);
  };
  return padded(own) < padded(now) ? set : kNoSet;
}
}  // namespace

ConvWinogradGemmScope::ConvWinogradGemmScope(Runtime& rt, size_t m, size_t n, size_t k)
    : XgemmSetScope(rt, winograd_set(rt, m, n, k)) {}

GemmPadding winograd_padding(Runtime& rt, size_t m, size_t n, size_t k) {
  const std::map<std::string, size_t>& set = winograd_set(rt, m, n, k);
  if (set.empty()) return padding(rt, m, n, k);  // the set in force (or already the Winograd set)
  return {std::clamp<size_t>(set.at("NWG"), 1, 1024), std::clamp<size_t>(set.at("MWG"), 1, 1024)};
}

bool conv_dw_splits(size_t filters, size_t patch) {
  return ((filters + kSplitDwTile - 1) / kSplitDwTile) * ((patch + kSplitDwTile - 1) / kSplitDwTile) <
         kSplitDwMaxTiles;
}

namespace {
// The most slices of at least `shortest` pixels each that `batch` samples of `plane` pixels give (at
// least 1; no bound where the plane is not known yet, before a layer's build()).
size_t slices_long_enough(size_t shortest, size_t plane, size_t batch) {
  if (plane == 0) return batch;
  const size_t samples = std::max<size_t>(1, (shortest + plane - 1) / plane);  // a slice's fewest
  return std::max<size_t>(1, batch / samples);
}
}  // namespace

size_t conv_dw_slices(Runtime* rt, size_t filters, size_t patch, size_t plane, size_t batch) {
  if (!conv_dw_splits(filters, patch)) return 1;
  const size_t most = rt ? gemm_state(*rt).dw_slices : GemmState::kDefaultDwSlices;
  const size_t shortest = rt ? gemm_state(*rt).dw_min_slice_columns : GemmState::kDefaultDwMinSliceColumns;
  size_t slices = std::min({std::max<size_t>(most, 1), batch, slices_long_enough(shortest, plane, batch)});
  while (slices > 1 && batch % slices != 0) --slices;
  return slices;
}

size_t conv_most_dw_slices(Runtime& rt, size_t filters, size_t patch, size_t plane, size_t max_batch) {
  return conv_dw_splits(filters, patch)
             ? std::min({gemm_state(rt).dw_slices, max_batch,
                         slices_long_enough(gemm_state(rt).dw_min_slice_columns, plane, max_batch)})
             : 1;
}

bool conv_dw_batched(Runtime& rt, size_t slices, size_t fp, size_t kp, size_t part) {
  return gemm_state(rt).batched_dw || slices == 1 || !reads_a_transposed(rt, fp, kp, part);
}

}  // namespace anycl::detail
