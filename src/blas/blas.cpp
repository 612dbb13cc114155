// CLBlast GEMM launcher: argument checks, the reused temporary buffer, and status → exception.
#include "anycl/blas/blas.hpp"

#include <clblast.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "anycl/error.hpp"
#include "anycl/profile.hpp"
#include "blas/blas_programs.hpp"
#include "blas/clblast_binary_cache.hpp"
#include "blas/clblast_library.hpp"
#include "blas/clblast_params.hpp"
#include "blas/clblast_params_lock.hpp"
#include "blas/clblast_program_store.hpp"
#include "blas/gemm_plan.hpp"
#include "blas/tuning/stored_tuning.hpp"
#include "ops/transpose.hpp"

namespace anycl {
namespace {

// Every Runtime applies the stored `anycl tune` parameters once GEMM is part of the program.
[[maybe_unused]] const bool kStoredTuningHook = detail::install_stored_tuning_hook();
[[maybe_unused]] const bool kReleaseHook = detail::install_release_clblast_programs_hook();

clblast::Transpose to_clblast(Trans t) {
  return t == Trans::yes ? clblast::Transpose::kYes : clblast::Transpose::kNo;
}
const char* name(Trans t) { return t == Trans::yes ? "T" : "N"; }

// Makes a CLBlast call, and once more where the driver refused a binary CLBlast took from its cache
// (CL_INVALID_BINARY: a kept one, clblast_program_store.hpp) with CLBlast's caches emptied, so that it
// compiles from source: a kept binary the driver stops accepting costs a compilation, not the training.
template <typename Call>
clblast::StatusCode with_refused_binary_retry(Call&& call) {
  const clblast::StatusCode status = call();
  if (status != clblast::StatusCode::kInvalidBinary) return status;
  detail::forget_clblast_binaries();
  return call();
}

// A CLBlast call's profile span. CLBlast hands back its last kernel's event only; where the call runs
// kernels of its own before that one (copies into a padded temporary, Convgemm's im2col), a marker
// enqueued first makes the span start where the command before the call ended, so their time shows
// as the call's and not as idle gaps (`anycl bench mlp --breakdown`).
class ProfiledCall {
 public:
  /// `kernels_before`: what the call runs before its last kernel ("copies"), or null for nothing.
  ProfiledCall(Runtime& rt, const char* kernels_before) : profile_(rt.profile()), before_(kernels_before) {
    if (!profile_ || !before_) return;
    cl_command_queue queue = rt.queue();
    if (clEnqueueMarkerWithWaitList(queue, 0, nullptr, &marker_) != CL_SUCCESS) marker_ = nullptr;
  }
  ~ProfiledCall() {
    if (marker_) clReleaseEvent(marker_);
    if (event_) clReleaseEvent(event_);
  }
  ProfiledCall(const ProfiledCall&) = delete;
  ProfiledCall& operator=(const ProfiledCall&) = delete;
  /// Where CLBlast writes its event: null when profiling is off.
  cl_event* event() { return profile_ ? &event_ : nullptr; }
  /// Records the call (once CLBlast returned its event), named `name`, and " + its copies" (say)
  /// where the span includes the kernels before the last.
  void record(std::string name, const char* category) {
    if (!event_) return;
    if (marker_) name += fmt::format(" + its {}", before_);
    profile_->record(std::exchange(event_, nullptr), std::move(name), category,
                     std::exchange(marker_, nullptr));
  }

 private:
  Profile* profile_;
  const char* before_;
  cl_event marker_ = nullptr, event_ = nullptr;
};

// `buffer` from `offset` (elements of T): a sub-buffer that starts there, and `offset` zeroed, where
// the device's alignment allows one (CLBlast's indirect kernel copies an operand at an offset).
template <typename T>
const DeviceBuffer& from_start(const DeviceBuffer& buffer, size_t& offset, DeviceBuffer& view) {
  if (offset == 0 || !buffer.can_start_at(offset * sizeof(T))) return buffer;
  view = buffer.sub_buffer(offset * sizeof(T), buffer.bytes() - offset * sizeof(T));
  offset = 0;
  return view;
}

template <typename T>
void gemm_impl(const char* routine, Runtime& rt, Trans ta, Trans tb, size_t m, size_t n, size_t k, T alpha,
               const DeviceBuffer& a, size_t a_off, size_t lda, const DeviceBuffer& b, size_t b_off,
               size_t ldb, T beta, DeviceBuffer& c, size_t c_off, size_t ldc) {
  auto where = [=, &rt] {  // the offsets as given (from_start zeroes c_off)
    return fmt::format("{} {}{} m={} n={} k={} lda={} ldb={} ldc={} offsets={},{},{} on {}", routine,
                       name(ta), name(tb), m, n, k, lda, ldb, ldc, a_off, b_off, c_off, rt.info().name);
  };
  if (m == 0 || n == 0) return;
  detail::require_clblast(routine);
  const detail::ClblastParamsUse one_set;  // from the layout through the enqueue (clblast_params_lock.hpp)
  // Row-major C = op(A)·op(B) is column-major Cᵀ = op(B)ᵀ·op(A)ᵀ over the same memory. CLBlast's
  // indirect kernel (GEMMK=0) wants C column-major: asked row-major, it computes C into a temporary
  // and transposes it back; asked column-major with A and B swapped, it writes C in place and
  // transposes one input less (MLP training on PoCL's AVX2 class: +13 %, docs/dev/performance-log.md). Its
  // direct kernel copies nothing either way, and its tuned sets are oriented to the row-major call,
  // so that call stays.
  const bool swap = detail::column_major_call(rt, m, n, k);  // the GEMM planner (gemm_plan.cpp)
  // Asked column-major, the kernel writes C in place only where C is whole MWG × NWG tiles, and
  // otherwise computes all of C into a temporary it copies in and out: the reference MLP's
  // first-layer dW (784 rows, NWG 64) moved 2 × 1.6 MB a step so. Where only C's last rows break
  // the tiles, the whole tiles go first, in place, and the last rows (fewer than NWG) apart.
  if (swap && ldc == n && (c_off == 0 || c.can_start_at(c_off * sizeof(T)))) {
    const detail::GemmLayoutParams tiles = detail::layout_params(rt);
    const size_t whole = m / tiles.nwg * tiles.nwg;
    if (whole > 0 && whole < m && n % tiles.mwg == 0) {
      gemm_impl(routine, rt, ta, tb, whole, n, k, alpha, a, a_off, lda, b, b_off, ldb, beta, c, c_off, ldc);
      const size_t a_skip = ta == Trans::no ? whole * lda : whole;  // op(A)'s first `whole` rows
      gemm_impl(routine, rt, ta, tb, m - whole, n, k, alpha, a, a_off + a_skip, lda, b, b_off, ldb, beta, c,
                c_off + whole * ldc, ldc);
      return;
    }
  }
  const auto layout = swap ? clblast::Layout::kColMajor : clblast::Layout::kRowMajor;
  const Trans first = swap ? tb : ta, second = swap ? ta : tb;
  const size_t rows = swap ? n : m, cols = swap ? m : n;
  // The indirect kernel copies a matrix that does not start its buffer (as every layer's weights
  // but the first do in a model's one parameter buffer) into a temporary on every call, unless
  // CLBlast is given a sub-buffer that starts where the matrix does: asked either way (a
  // convolution's weight gradient per slice of the batch is asked row-major on Intel's runtime,
  // whose tiles make that fewer: 16 slices of conv 2's 64×288×73728, 65 -> 20 ms).
  DeviceBuffer x_view, y_view, c_view;
  size_t x_off = swap ? b_off : a_off, y_off = swap ? a_off : b_off;
  const size_t ldx = swap ? ldb : lda, ldy = swap ? lda : ldb;
  const DeviceBuffer& x = from_start<T>(swap ? b : a, x_off, x_view);
  const DeviceBuffer& y = from_start<T>(swap ? a : b, y_off, y_view);
  const DeviceBuffer& out = from_start<T>(c, c_off, c_view);
  cl_command_queue queue = rt.queue();
  size_t temp_bytes = 0;
  auto status = clblast::GemmTempBufferSize<T>(layout, to_clblast(first), to_clblast(second), rows, cols, k,
                                               x_off, ldx, y_off, ldy, c_off, ldc, &queue, temp_bytes);
  if (status != clblast::StatusCode::kSuccess)
    throw OpenCLError(int(status), "clblast::GemmTempBufferSize", where());
  ++rt.counters().gemm_calls;
  cl_mem temp = temp_bytes ? rt.workspace(temp_bytes).mem() : nullptr;
  ProfiledCall call(rt, temp_bytes > 0 ? "copies" : nullptr);  // CLBlast copies into a temporary
  status = with_refused_binary_retry([&] {
    return clblast::Gemm<T>(layout, to_clblast(first), to_clblast(second), rows, cols, k, alpha, x.mem(),
                            x_off, ldx, y.mem(), y_off, ldy, beta, out.mem(), c_off, ldc, &queue,
                            call.event(), temp);
  });
  if (status != clblast::StatusCode::kSuccess) throw OpenCLError(int(status), "clblast::Gemm", where());
  call.record(fmt::format("{} {}{} {}x{}x{}", routine, name(ta), name(tb), m, n, k), "gemm");
}

}  // namespace

void gemm(Runtime& rt, Trans ta, Trans tb, size_t m, size_t n, size_t k, float alpha, const DeviceBuffer& a,
          size_t a_offset, size_t lda, const DeviceBuffer& b, size_t b_offset, size_t ldb, float beta,
          DeviceBuffer& c, size_t c_offset, size_t ldc) {
  gemm_impl<float>("SGEMM", rt, ta, tb, m, n, k, alpha, a, a_offset, lda, b, b_offset, ldb, beta, c, c_offset,
                   ldc);
}

void gemm(Runtime& rt, Trans ta, Trans tb, size_t m, size_t n, size_t k, double alpha, const DeviceBuffer& a,
          size_t a_offset, size_t lda, const DeviceBuffer& b, size_t b_offset, size_t ldb, double beta,
          DeviceBuffer& c, size_t c_offset, size_t ldc) {
  if (!rt.info().fp64)
    throw ValidationError(
        fmt::format("DGEMM needs fp64, which '{}' does not support — use float", rt.info().name));
  gemm_impl<double>("DGEMM", rt, ta, tb, m, n, k, alpha, a, a_offset, lda, b, b_offset, ldb, beta, c,
                    c_offset, ldc);
}

void matmul(const Tensor& a, Trans ta, const Tensor& b, Trans tb, Tensor& c, float alpha, float beta) {
  const size_t m = ta == Trans::no ? a.rows() : a.cols(), k = ta == Trans::no ? a.cols() : a.rows();
  const size_t kb = tb == Trans::no ? b.rows() : b.cols(), n = tb == Trans::no ? b.cols() : b.rows();
  if (k != kb || c.rows() != m || c.cols() != n)
    throw ValidationError(fmt::format("matmul shapes do not fit: a{}{} · b{}{} → c{}", a.shape_string(),
                                      ta == Trans::yes ? "ᵀ" : "", b.shape_string(),
                                      tb == Trans::yes ? "ᵀ" : "", c.shape_string()));
  DeviceBuffer c_buffer = c.buffer();
  gemm(c.runtime(), ta, tb, m, n, k, alpha, a.buffer(), a.offset(), a.cols(), b.buffer(), b.offset(),
       b.cols(), beta, c_buffer, c.offset(), c.cols());
}

bool gemm_reads_a_transposed(Runtime& rt, size_t m, size_t n, size_t k) {
  return detail::reads_a_transposed(rt, m, n, k);
}

GemmPadding gemm_padding(Runtime& rt, size_t m, size_t n, size_t k) { return detail::padding(rt, m, n, k); }

DenseDxForm dense_dx_form(Runtime& rt, size_t batch, size_t in, size_t units) {
  return detail::dense_dx(rt, batch, in, units);
}

void gemm_strided_batched(Runtime& rt, Trans ta, Trans tb, size_t m, size_t n, size_t k, float alpha,
                          const DeviceBuffer& a, size_t a_offset, size_t lda, size_t a_stride,
                          const DeviceBuffer& b, size_t b_offset, size_t ldb, size_t b_stride, float beta,
                          DeviceBuffer& c, size_t c_offset, size_t ldc, size_t c_stride, size_t batch) {
  if (m == 0 || n == 0 || batch == 0) return;
  detail::require_clblast("clblast::GemmStridedBatched");
  const detail::ClblastParamsUse one_set;
  // Asked column-major where the indirect kernel runs, as gemm does (A and B swapped): CLBlast 1.5
  // then copies nothing when the operands are laid out as gemm_padding says. Unlike Gemm, its
  // batched routine takes no temporary buffer: every copy it makes is a fresh allocation.
  const bool swap = detail::column_major_call(rt, m, n, k);  // the GEMM planner (gemm_plan.cpp)
  const auto layout = swap ? clblast::Layout::kColMajor : clblast::Layout::kRowMajor;
  const Trans first = swap ? tb : ta, second = swap ? ta : tb;
  // Operands at an offset (a Dense layer's W in the model's parameters) as sub-buffers, as gemm does.
  DeviceBuffer x_view, y_view, c_view;
  size_t x_off = swap ? b_offset : a_offset, y_off = swap ? a_offset : b_offset, c_off = c_offset;
  const DeviceBuffer& x = from_start<float>(swap ? b : a, x_off, x_view);
  const DeviceBuffer& y = from_start<float>(swap ? a : b, y_off, y_view);
  const DeviceBuffer& out = from_start<float>(c, c_off, c_view);
  // CLBlast 1.5.3's indirect batched kernel ignores the strides and offsets of every operand it does
  // not copy: it takes matrix i at i × its packed size from the buffer's start. Packed strides at offset
  // 0 (the trainer's calls) go to it; any other layout runs as one GEMM a batch, which is exact for all.
  const size_t a_rows = ta == Trans::no ? m : k, b_rows = tb == Trans::no ? k : n;
  const bool packed =
      x_off == 0 && y_off == 0 && c_off == 0 &&
      (batch == 1 || (a_stride == a_rows * lda && b_stride == b_rows * ldb && c_stride == m * ldc));
  if (!packed) {
    for (size_t i = 0; i < batch; ++i)
      gemm(rt, ta, tb, m, n, k, alpha, a, a_offset + i * a_stride, lda, b, b_offset + i * b_stride, ldb, beta,
           c, c_offset + i * c_stride, ldc);
    return;
  }
  cl_command_queue queue = rt.queue();
  ++rt.counters().gemm_calls;
  // One kernel where the operands are laid out as gemm_padding says (the trainer's case).
  ProfiledCall call(rt, nullptr);
  const auto status = with_refused_binary_retry([&] {
    return clblast::GemmStridedBatched<float>(
        layout, to_clblast(first), to_clblast(second), swap ? n : m, swap ? m : n, k, alpha, x.mem(), x_off,
        swap ? ldb : lda, swap ? b_stride : a_stride, y.mem(), y_off, swap ? lda : ldb,
        swap ? a_stride : b_stride, beta, out.mem(), c_off, ldc, c_stride, batch, &queue, call.event());
  });
  if (status != clblast::StatusCode::kSuccess)
    throw OpenCLError(int(status), "clblast::GemmStridedBatched",
                      fmt::format("SGEMM {}{} m={} n={} k={} strides={},{},{} batch={} on {}", name(ta),
                                  name(tb), m, n, k, a_stride, b_stride, c_stride, batch, rt.info().name));
  call.record(fmt::format("SGEMM batched {}{} {}x{}x{} ×{}", name(ta), name(tb), m, n, k, batch), "gemm");
}

void convgemm(Runtime& rt, size_t channels, size_t height, size_t width, size_t kernel, size_t pad,
              size_t stride, size_t filters, size_t batch, const DeviceBuffer& im, size_t im_offset,
              const DeviceBuffer& kernels, size_t kernels_offset, DeviceBuffer& result,
              size_t result_offset) {
  if (batch == 0) return;
  detail::require_clblast("clblast::Convgemm");
  const detail::ClblastParamsUse one_set;
  cl_command_queue queue = rt.queue();
  ++rt.counters().gemm_calls;
  ProfiledCall call(rt, "im2col");  // im2col, then the batched GEMM (CLBlast 1.5.3)
  const auto status = with_refused_binary_retry([&] {
    return clblast::Convgemm<float>(clblast::KernelMode::kCrossCorrelation, channels, height, width, kernel,
                                    kernel, pad, pad, stride, stride, 1, 1, filters, batch, im.mem(),
                                    im_offset, kernels.mem(), kernels_offset, result.mem(), result_offset,
                                    &queue, call.event());
  });
  if (status != clblast::StatusCode::kSuccess)
    throw OpenCLError(
        int(status), "clblast::Convgemm",
        fmt::format("({}, {}, {}) kernel {} pad {} stride {} filters {} batch {} on {}", channels, height,
                    width, kernel, pad, stride, filters, batch, rt.info().name));
  call.record(fmt::format("Convgemm ({}, {}, {}) {}×{} → {} ×{}", channels, height, width, kernel, kernel,
                          filters, batch),
              "gemm");
}

void transpose(const Tensor& a, Tensor& out) { BlockTranspose(out.runtime()).run(a, out); }

void omatcopy(Runtime& rt, Trans t, size_t rows, size_t cols, const DeviceBuffer& a, size_t a_offset,
              size_t lda, DeviceBuffer& b, size_t b_offset, size_t ldb) {
  if (rows == 0 || cols == 0) return;
  detail::require_clblast("clblast::Omatcopy");
  const detail::ClblastParamsUse one_set;
  cl_command_queue queue = rt.queue();
  ProfiledCall call(rt, nullptr);
  const auto status = with_refused_binary_retry([&] {
    return clblast::Omatcopy<float>(clblast::Layout::kRowMajor, to_clblast(t), rows, cols, 1.f, a.mem(),
                                    a_offset, lda, b.mem(), b_offset, ldb, &queue, call.event());
  });
  if (status != clblast::StatusCode::kSuccess)
    throw OpenCLError(
        int(status), "clblast::Omatcopy",
        fmt::format("{} {}x{} (lda {}, ldb {}) on {}", name(t), rows, cols, lda, ldb, rt.info().name));
  call.record(fmt::format("Omatcopy {} {}x{}", name(t), rows, cols), "transpose");
}

void gemm_warmup(Runtime& rt, const std::vector<std::pair<Trans, Trans>>& transposes,
                 const std::vector<size_t>& sizes) {
  for (size_t s : sizes) {
    Tensor a(rt, {s, s}), b(rt, {s, s}), c(rt, {s, s});
    a.fill(1.f), b.fill(1.f);
    for (const auto& [ta, tb] : transposes) matmul(a, ta, b, tb, c);
  }
  rt.finish();
}

namespace detail {
bool install_release_clblast_programs_hook() {
  // Without CLBlast (a delay-loaded clblast.dll that is missing) there is nothing to empty.
  last_runtime_hook() = [](bool last) noexcept {
    if (!clblast_missing().empty()) return;
    if (last)
      clblast::ClearCache();
    else
      clblast_binaries::forget_programs();
  };
  return true;
}
}  // namespace detail

}  // namespace anycl
