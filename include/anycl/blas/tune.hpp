// Tuning as a library call: `tune` searches CLBlast's GEMM parameters for a runtime's device at a
// model's shapes and stores them where every later Runtime on that device applies them; first-use
// tuning is the same search, quick, run only where the device has no tuning yet (tune_on_first_use).
// Candidates compile and run in child processes of anycl's worker program (anycl-tune-worker), so a
// driver that crashes on one parameter set costs that candidate, not the application.
//
//   anycl::TuneSettings s;
//   s.shapes = anycl::model_gemm_shapes(model, 128, &rt);  // the GEMMs training runs on rt's device
//   s.progress = [](const anycl::TuneProgress& p) { std::puts(p.line.c_str()); return true; };
//   anycl::TuneReport r = anycl::tune(rt, s);  // minutes on a CPU; applied to rt and stored
#pragma once

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "anycl/blas/tuning.hpp"
#include "anycl/runtime.hpp"

namespace anycl {

/// Where a tuning is, given to TuneSettings::progress with each line the tuner reports.
struct TuneProgress {
  std::string line;       // what the tuner says (one line, no newline)
  std::string stage;      // "XgemmDirect", "Xgemm", "GemmRoutine"; "" before the first stage
  size_t candidates = 0;  // parameter sets measured so far, over every stage
  double best_seconds =
      0;               // the current stage's best exact set so far (one pass over the shapes); 0: none yet
  double seconds = 0;  // since the tuning began
};

/// How tune() searches (TuneOptions is the search itself; this is the call around it).
struct TuneSettings {
  bool quick = false;  // the shortlists only, as first-use tuning (about 95 s of shortlists on a 2-core CPU)
  double minutes = 0;  // the time for the search; 0: 1.6 quick, else 8 (16 when a GEMM is large)
  std::vector<GemmShape> shapes = reference_model_gemm_shapes();  // the model's GEMMs (model_gemm_shapes)
  /// Called with every progress line; returning false stops the tuning after the candidate being
  /// measured, keeping the best set found so far (stored and applied, TuneReport::stopped).
  std::function<bool(const TuneProgress&)> progress;
  const std::atomic<bool>* stop = nullptr;  // another way to stop (a Ctrl-C handler's flag)
  std::string worker;                       // the worker program; "": find_tune_worker()
};

/// What tune() did.
struct TuneReport {
  GemmTuning tuning;  // what is stored and applied (a stopped run: the stages it finished or began)
  std::string path;   // the tuning file it wrote (tuning_file_path)
  std::string
      baseline;  // what it measured against: "anycl's tuning database entry X" or "CLBlast's own parameters"
  bool stopped = false;    // stopped early (progress returned false, or *stop): the best found so far is kept
  bool continued = false;  // continued an interrupted earlier tuning stored in `path`
  /// What it measured against, for messages: "the <entry> parameters" (the database entry's file)
  /// or "CLBlast's own parameters".
  std::string against;
  bool kept_entry = false;  // no set beat the database entry by 5 %: the entry is stored instead
};

/// Tunes CLBlast's GEMM for `rt`'s device at `settings.shapes`: each stage's candidates run in
/// child processes of the worker program, measured against the device's database entry (applied to
/// `rt` first, with its `large` sets for large GEMMs) or else CLBlast's own parameters; a result
/// that does not beat the entry by 5 % keeps the entry (TuneReport::kept_entry), and a quick tune
/// stops a stage early when the first third of its shortlist holds nothing that beats the set the
/// device runs by 5 %. The result is stored atomically in
/// tuning_file_path(rt.info()) (after each stage while no complete tuning is there; a complete
/// earlier one stays until the new one is complete; an interrupted one is continued) and applied to
/// `rt`. Throws Error when the cache is off (nowhere to store it), when the worker is not found
/// (find_tune_worker's message), or when a stage finds no exact set before it is stopped.
TuneReport tune(Runtime& rt, const TuneSettings& settings);

/// Why first-use tuning does not run for `device`, or "" when it should: ANYCL_AUTOTUNE or
/// ANYCL_TUNING is off (or 0), the cache is off, the device has a usable tuning file, the tuning
/// database has a specific entry for it (a generic one does not count), or it is a GPU and
/// ANYCL_AUTOTUNE is not "on" (CLBlast's own GPU database applies: kGpuUsesClblastDatabase).
std::string first_use_tuning_skipped(const DeviceInfo& device);
/// first_use_tuning_skipped's reason for a GPU, which `anycl train` prints as an offer.
inline constexpr const char* kGpuUsesClblastDatabase =
    "a GPU: CLBlast's own GPU database applies (`anycl tune --quick`, or ANYCL_AUTOTUNE=on, tunes it at "
    "this model's shapes)";

/// First-use tuning, as `anycl train` and Python's `fit` run it: when first_use_tuning_skipped()
/// says nothing, a quick tune() of `rt` at the model's `shapes` (seconds to minutes, once per device
/// and driver). Nothing when skipped; `skipped` (may be null) receives why.
std::optional<TuneReport> tune_on_first_use(Runtime& rt, const std::vector<GemmShape>& shapes,
                                            const std::function<bool(const TuneProgress&)>& progress = {},
                                            std::string* skipped = nullptr);

/// The path of anycl's tuning worker program: $ANYCL_TUNE_WORKER when set, else anycl-tune-worker
/// beside the anycl library (or the program holding it), else in <that folder>/../libexec/anycl.
/// Throws UnsupportedError naming every place it looked, and what to do, when there is none.
std::string find_tune_worker();

/// tuning_mismatch() for `tuning` on `device`, run in a child process of the worker program: ""
/// when the parameters compute exact results, else why they are refused (wrong results, or the
/// driver crashed compiling or running them), naming the device, its driver and the parameters.
std::string contained_tuning_mismatch(const DeviceInfo& device, const GemmTuning& tuning);
/// "Xgemm GEMMK=1 KREG=8 …; XgemmDirect …" for messages.
std::string describe_parameters(const GemmTuning& tuning);

/// GEMM shapes as one line ("NN128x512x784/fwd 1;…", as `anycl tune --shapes` takes them) and back;
/// ValidationError naming the item on bad text.
std::string format_gemm_shapes(const std::vector<GemmShape>& shapes);
std::vector<GemmShape> parse_gemm_shapes(const std::string& text);

/// The worker program's main (tools/tune_worker/main.cpp), not for applications: measures a file
/// of candidates, or checks a tuning file, on one device, as tune() and contained_tuning_mismatch()
/// ask it to. Returns the exit code.
int tune_worker_main(int argc, char** argv);

}  // namespace anycl
