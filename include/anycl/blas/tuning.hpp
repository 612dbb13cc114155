// Persisted CLBlast tuning: `anycl tune` measures CLBlast's GEMM kernel parameters for one device
// at the model's shapes and stores them in a per-device file beside the kernel cache (keyed on
// platform, device and driver version, like the cache); every Runtime applies them at start-up.
//
//   anycl::GemmTuning t = anycl::tune_gemm(rt, {});        // minutes on a CPU device
//   anycl::save_tuning(anycl::tuning_file_path(rt.info()), t);
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "anycl/runtime.hpp"

namespace anycl {

class Sequential;

/// CLBlast parameters per kernel family ("XgemmDirect", "Xgemm", "GemmRoutine"), as CLBlast names
/// them, plus anycl's own measured choices "anyclDense" {TRANSPOSED_DX: 0|1} (dense dx as a transpose
/// of W and a GEMM NN) and, from the tuning database only, "anyclConv" {BATCHED_DW: 0|1, DW_SLICES:
/// 1..1024} (a convolution's weight gradient: its slices batched, and their most), which set the
/// runtime's GEMM state (dense_dx_form says what they decide).
struct GemmTuning {
  std::map<std::string, std::map<std::string, size_t>> kernels;
  std::string device, driver;                    // for people reading the file; the file name carries the key
  double seconds = 0;                            // how long tuning took
  double seconds_before = 0, seconds_after = 0;  // one pass over the model's GEMMs, untuned and tuned
  bool quick = false;                            // from the shortlist only (first-use tuning)
};

/// One GEMM shape (row-major C(m,n) = op(A)·op(B), k the inner size).
struct GemmShape {
  std::string label;
  bool trans_a = false, trans_b = false;
  size_t m = 0, n = 0, k = 0;
  size_t count = 1;  // calls per training step (a weight gradient split over slices of the batch)
  /// A Dense product (forward NN, dx NT): where the indirect kernel reads A transposed
  /// (gemm_reads_a_transposed), training transposes A (and a dx's B) with anycl's kernel and asks
  /// the product as TN, so the tuner times it so.
  bool transposes_a = false;
};

/// The reference model's eight GEMMs per training step at batch 128 (forward, dW, dX).
std::vector<GemmShape> reference_model_gemm_shapes(size_t batch = 128);
/// The GEMMs one training step of `model` runs at `batch` rows on `rt`'s device: "fwd 1…" in layer
/// order, then "dW i"/"dX i" as backward reaches them (i counts the layers that run GEMMs). The
/// model need not be built. On a runtime, only the GEMMs training runs there, laid out as it runs
/// them (a convolution that runs direct kernels on a CPU has no forward or dW GEMM; a convolution's
/// dW in the slices and padding of the runtime's GEMM planner); a null `rt`: every GEMM the layers
/// can run, at the planner's defaults (Layer::gemm_shapes).
std::vector<GemmShape> model_gemm_shapes(const Sequential& model, size_t batch, Runtime* rt);

/// One parameter set of one CLBlast kernel ("XgemmDirect" or "Xgemm") to time at a model's shapes.
struct TuningCandidate {
  std::string kernel;
  std::map<std::string, size_t> params;
};

/// What timing one candidate found.
struct CandidateResult {
  size_t index = 0;    // position in the list measured
  double seconds = 0;  // one pass over the shapes (GEMM routine forced onto the kernel); 0: failed
  bool exact = false;  // passed the exact GEMM check (only run when it was the fastest so far)
  std::string error;   // why it failed, or what it computed wrongly; "" when it ran
  /// Seconds per GEMM of timed_shapes(shapes): each shape, then each dense dx as a GEMM NN, then
  /// each Dense product as TN. The direct/indirect switch and the dx layout are chosen from the
  /// stages' times (the indirect winner's, and the direct set's that serves the switch best), so
  /// that choice compiles nothing (a new switch value is a new CLBlast program). `seconds` counts
  /// each shape as training runs it on the candidate's kernel: a Dense product as its transposes
  /// plus the TN GEMM where the kernel reads A transposed.
  std::vector<double> shape_seconds;
  double transposes_seconds = 0;  // of `seconds`: anycl's transposes before Dense's products run as TN
};

/// The shapes a candidate is timed at: `shapes`, then the NN GEMM of each dense dx (an NT shape),
/// which the trainer runs instead after transposing W (DenseDxForm::transpose_w_gemm_nn), then the TN GEMM of
/// each Dense product (GemmShape::transposes_a), which it runs on the indirect kernel.
std::vector<GemmShape> timed_shapes(const std::vector<GemmShape>& shapes);
/// For each of `shapes`, the position of its TN GEMM in timed_shapes(shapes), or kNoTn.
std::vector<size_t> tn_positions(const std::vector<GemmShape>& shapes);
inline constexpr size_t kNoTn = size_t(-1);

/// Times candidates in one process, one after another. Each candidate that is faster than
/// `best_seconds` and every candidate before it is then checked for exact GEMMs (gemm_mismatch),
/// so only possible winners pay for the check. Stops starting candidates after `budget_seconds`;
/// `on_start` sees each index before it compiles (so a driver crash can be blamed on it) and
/// `on_result` each result. CLBlast's parameters are left as they were.
void measure_candidates(Runtime& rt, const std::vector<TuningCandidate>& candidates,
                        const std::vector<GemmShape>& shapes, double best_seconds, double budget_seconds,
                        const std::function<void(size_t)>& on_start,
                        const std::function<void(const CandidateResult&)>& on_result);

/// How a search has its candidates measured: the candidates, the best time so far (only faster ones
/// are checked), the seconds left, and where each result goes as soon as it is known (candidates
/// not reached report nothing). anycl tune's CLI runs them in child processes, so that a driver
/// crash costs one candidate; the default (TuneOptions::measure empty) runs measure_candidates in
/// this process.
using CandidateMeasurer =
    std::function<void(const std::vector<TuningCandidate>& candidates, double best_seconds,
                       double budget_seconds, const std::function<void(const CandidateResult&)>& on_result)>;

/// The known-good parameter sets of `kernel` for `device`, most promising first: CLBlast's current
/// parameters (its defaults, or its own database's entry for a known GPU), every set the shipped
/// tuning database holds for the kernel (the entries' own sets, then their `candidate` lines),
/// without duplicates, each fitting the device (constraints, work-group size, local memory).
std::vector<TuningCandidate> tuning_shortlist(Runtime& rt, const std::string& kernel);

/// How tune_gemm searches: for each kernel, the shortlist first, then (unless `quick`) a local
/// search from the best exact set: its neighbours one step away, moving to a faster one until none
/// is faster or the stage's time is spent.
struct TuneOptions {
  bool quick = false;  // the shortlist only, its rest only when its first third beats the current set by 5 %
  double direct_seconds = 240;    // time for the XgemmDirect stage (shortlist and search)
  double indirect_seconds = 180;  // time for the Xgemm stage
  std::vector<GemmShape> shapes = reference_model_gemm_shapes();
  std::function<void(const std::string&)> progress;   // a line per candidate and a few per stage
  std::function<void(const GemmTuning&)> stage_done;  // the result so far, after each stage
  CandidateMeasurer measure;                          // how candidates are timed; empty: in this process
  const std::atomic<bool>* stop = nullptr;  // when it turns true, the stage keeps the best found so far
  GemmTuning earlier;               // stages already tuned (e.g. an interrupted run's file): kept, not redone
  std::vector<std::string> stages;  // the stages to run (names from kTuningStages); empty: all
};

/// The tuning stages in order, named by the kernel family each stores.
inline constexpr const char* kTuningStages[] = {"XgemmDirect", "Xgemm", "GemmRoutine"};
/// True when `tuning` holds every stage.
bool tuning_complete(const GemmTuning& tuning);

/// The tuning file of a device: "<cache dir>/clblast-tuning-<key>.txt", where <key> hashes the
/// platform, device and driver version as the kernel cache does; "" when the cache is off.
std::string tuning_file_path(const DeviceInfo& device);

/// The entry of the tuning database shipped with anycl (tuning/*.txt, compiled in) that matches
/// `device` most specifically (platform, device and driver name parts); nothing when none does.
/// `entry` receives its file name, `generic` whether it is a platform-wide fallback (first-use
/// tuning still runs on such a device). With a model's `shapes` of which one is large_gemm, the
/// entry's `large` sets replace its own (a convolutional network's
/// tall GEMMs want other parameters than an MLP's). A Runtime applies the entry when the device has
/// no tuning file; building a model on it then switches to the sets for that model (apply_model_tuning).
/// ANYCL_TUNING_DATABASE=off (or 0) turns the database off: nothing matches. Set to a folder, that
/// folder's *.txt entries (as `anycl tune --export` prints them; regular files of at most 1 MiB)
/// replace the shipped ones here and in database_parameter_sets; DataError or ValidationError, naming
/// the folder or file, when it cannot be read or an entry does not parse.
std::optional<GemmTuning> database_tuning(const DeviceInfo& device, std::string* entry = nullptr,
                                          bool* generic = nullptr,
                                          const std::vector<GemmShape>* shapes = nullptr);
/// Multiply-adds from which a model's GEMM of one shape, all its calls a step together
/// (large_gemm), counts as large for the tuning database (2^28: the reference CNN's convolutions,
/// not the reference MLP's layers).
inline constexpr size_t kLargeGemm = size_t(1) << 28;
/// Whether `s`'s multiply-adds a step, m·n·k·count, reach kLargeGemm (Winograd's 36 products of a
/// plane each, or a weight gradient's slices, count as the one product they share out).
inline bool large_gemm(const GemmShape& s) noexcept { return s.m * s.n * s.k * s.count >= kLargeGemm; }
/// When `rt` runs the tuning database's entry (its device has no tuning file of its own), applies
/// that entry's sets for a model with these GEMM `shapes`, after the exact check, if CLBlast does
/// not already hold them; otherwise changes nothing. Sequential::build calls it (at a batch of at least
/// 128), so training, evaluation and prediction of a model run the same sets.
void apply_model_tuning(Runtime& rt, const std::vector<GemmShape>& shapes);
/// Every parameter set of `kernel` in the tuning database (a folder's, when ANYCL_TUNING_DATABASE
/// names one), whatever device it matches and even with ANYCL_TUNING_DATABASE=off: the entries' own and
/// `large` sets first, then their `candidate` lines (first-use tuning's shortlist).
std::vector<std::map<std::string, size_t>> database_parameter_sets(const std::string& kernel);
/// `tuning` as a database entry for `device` (what `anycl tune --export` prints), to contribute.
std::string database_entry(const GemmTuning& tuning, const DeviceInfo& device);

/// Parses a tuning file (a regular file of at most 64 MiB); nothing (and `why` says what is wrong)
/// when missing, not a regular file, corrupt or incomplete.
std::optional<GemmTuning> load_tuning(const std::string& path, std::string* why = nullptr);
/// Writes a tuning file atomically; throws Error naming the path on failure.
void save_tuning(const std::string& path, const GemmTuning& tuning);
/// Hands the parameters to CLBlast (OverrideParameters) for the runtime's device. Everything is
/// checked first, so a refused tuning changes nothing: ValidationError for a kernel anycl does not
/// tune, a parameter CLBlast does not expect or lacks, or a set that breaks the constraints CLBlast's
/// tuners state (such parameters compile into kernels that compute wrong results); OpenCLError when
/// CLBlast refuses them itself. Runtime applies the stored file this way and also checks it for
/// exact GEMMs once per device, driver and parameter set.
void apply_tuning(Runtime& rt, const GemmTuning& tuning);
/// Runs GEMM through CLBlast at `shapes` and at small odd sizes in all four transposes, with small
/// integers (exact in float); "" when every result matches a host loop exactly, else the first
/// mismatch (shape, count, a wrong element). `anycl tune` and `anycl doctor` rely on it.
std::string gemm_mismatch(Runtime& rt, const std::vector<GemmShape>& shapes = {});

/// Checks that the CLBlast parameters in `tuning` (XgemmDirect, Xgemm, and the Xgemm sets it names for
/// some products: anyclConvDwXgemm, anyclDenseXgemm, anyclConvWinogradXgemm) compute exact results
/// through the GEMM routine at `shapes` and some odd sizes, each kernel forced; "" when they do, else
/// which kernel or line and what differs. CLBlast's parameters in `rt` are left as they were. tune_gemm()
/// checks every stage this way and stores nothing that fails. It compiles CLBlast's kernels with the
/// parameters in this process, and some drivers crash compiling some parameter sets: check untrusted
/// ones in a child process, as `anycl tune` (each stage), `anycl tune --check` and `anycl doctor` do.
std::string tuning_mismatch(Runtime& rt, const GemmTuning& tuning,
                            const std::vector<GemmShape>& shapes = reference_model_gemm_shapes());
/// Searches XgemmDirect and Xgemm parameters at the shapes (see TuneOptions), then picks the
/// direct/indirect switch size that is fastest over them and the dense layers' dx layout, with the
/// direct set that is fastest at the shapes the switch leaves to the direct kernel (any set the
/// direct stage timed, checked for exact results first; the stage's own best is fastest over all
/// shapes, the large ones the switch sends to the indirect kernel included). Stages
/// found in `options.earlier` are kept; `options.stage_done` sees the result after each stage, so
/// an interrupted run loses only the stage in progress. Applies the result to `rt`, and records in
/// `seconds_before`/`seconds_after` one pass over the shapes as trained with the parameters as they
/// were (their sets timed as candidates, at their switch and dx layout; else timed in this process
/// at the bare shapes) and as tuned.
GemmTuning tune_gemm(Runtime& rt, const TuneOptions& options);

}  // namespace anycl
