// tune(): the tuning workflow as a library call (anycl/blas/tune.hpp) — the search of tuning.cpp
// with its candidates measured in child processes of the worker program, stored in the device's
// tuning file stage by stage, stoppable from a progress callback; and finding that program.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>

#include "anycl/blas/tune.hpp"
#include "anycl/error.hpp"
#include "anycl/util/atomic_file.hpp"
#include "blas/gemm_plan.hpp"
#include "blas/tuning/confirm_tuning.hpp"
#include "blas/tuning/contained_check.hpp"
#include "blas/tuning/tune_worker.hpp"
#include "blas/tuning/tuning_margin.hpp"
#include "util/platform.hpp"
#include "util/process.hpp"

namespace anycl {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kWorkerName = "anycl-tune-worker";

double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// The stage a progress line opens ("[1/3] XgemmDirect (direct kernel)…"), or "" for other lines.
std::string stage_of(const std::string& line) {
  if (line.rfind("[1/3] ", 0) == 0) return "XgemmDirect";
  if (line.rfind("[2/3] ", 0) == 0) return "Xgemm";
  if (line.rfind("[3/3] ", 0) == 0) return "GemmRoutine";
  return "";
}

}  // namespace

std::string find_tune_worker() {
  if (const auto named = detail::platform::get_env("ANYCL_TUNE_WORKER"); named && !named->empty()) {
    std::error_code ec;
    if (fs::is_regular_file(*named, ec)) return *named;
    throw UnsupportedError(fmt::format(
        "ANYCL_TUNE_WORKER is {}, which is not a file — set it to anycl's tuning worker program ({}) or "
        "unset it",
        *named, kWorkerName));
  }
  const std::string name = kWorkerName + std::string(detail::platform::kProgramSuffix);
  std::vector<fs::path> folders;
  auto add = [&](const fs::path& folder) {
    if (!folder.empty() && std::find(folders.begin(), folders.end(), folder) == folders.end())
      folders.push_back(folder);
  };
  // The library holding this function (libanycl.so, anycl.dll; the program itself when linked
  // statically), then its install layout's libexec folder; the running program's folder last.
  const fs::path library =
      detail::platform::library_containing(reinterpret_cast<const void*>(&find_tune_worker));
  if (!library.empty()) {
    add(library.parent_path());
    add((library.parent_path() / ".." / "libexec" / "anycl").lexically_normal());
  }
  add(detail::platform::current_executable().parent_path());
  std::string looked;
  for (const fs::path& folder : folders) {
    std::error_code ec;
    if (fs::is_regular_file(folder / name, ec)) return (folder / name).string();
    looked += (looked.empty() ? "" : ", ") + folder.string();
  }
  throw UnsupportedError(fmt::format(
      "anycl's tuning worker program {} was not found (looked in {}): tuning runs each candidate parameter "
      "set in a child process of it, so that a driver crash costs one candidate — install anycl with it "
      "(`cmake --install` puts it in <prefix>/libexec/anycl; the Python package carries it beside its "
      "library), or set ANYCL_TUNE_WORKER to its path",
      name, looked.empty() ? "nowhere: the anycl library's folder is unknown" : looked));
}

TuneReport tune(Runtime& rt, const TuneSettings& settings) {
  const DeviceInfo& device = rt.info();
  TuneReport report;
  report.path = tuning_file_path(device);
  if (report.path.empty())
    throw Error(
        "tune: the cache is off (ANYCL_CACHE=off), so there is nowhere to store a tuning — unset "
        "ANYCL_CACHE");
  if (settings.shapes.empty()) throw ValidationError("tune: no GEMM shapes to tune for");
  if (!(settings.minutes >= 0 && std::isfinite(settings.minutes)))
    throw ValidationError(
        fmt::format("tune: minutes must be 0 (the default) or positive, got {}", settings.minutes));
  const std::string worker = settings.worker.empty() ? find_tune_worker() : settings.worker;
  std::error_code ignored;  // anycl's own cache folder (save_tuning makes it too): a fresh machine lacks it
  fs::create_directories(fs::path(report.path).parent_path(), ignored);
  check_output_file(report.path);  // a FIFO, folder or link there is refused now, not after minutes of tuning

  const auto start = Clock::now();
  std::atomic<bool> halt{false};
  auto stopped = [&] {
    if (settings.stop && *settings.stop) halt = true;
    return halt.load();
  };
  std::string stage;
  size_t candidates = 0;
  double best = 0;
  auto say = [&](const std::string& line) {
    if (const std::string opened = stage_of(line); !opened.empty()) stage = opened, best = 0;
    if (settings.progress && !settings.progress(TuneProgress{line, stage, candidates, best, since(start)}))
      halt = true;
    stopped();
  };

  TuneOptions options;
  options.shapes = settings.shapes;
  options.quick = settings.quick;
  const bool large = std::any_of(settings.shapes.begin(), settings.shapes.end(), large_gemm);
  // Quick: about 95 s of shortlists (what first-use tuning costs); a full tune: the shortlists, then
  // the neighbour search, for 8 minutes (16 with a convolutional network's GEMMs). Each stage's time is a
  // bound.
  const double minutes = settings.minutes > 0 ? settings.minutes
                         : settings.quick     ? 95.0 / 60
                         : large              ? 16
                                              : 8;
  options.direct_seconds = 60 * minutes * (settings.quick ? 0.74 : 0.5);
  options.indirect_seconds = 60 * minutes * (settings.quick ? 0.26 : 0.35);
  const auto existing = load_tuning(report.path);
  report.continued = existing && !tuning_complete(*existing);
  if (report.continued) options.earlier = *existing;
  say(fmt::format("{} CLBlast SGEMM for {} (driver {}) at {} GEMM shapes; candidates run in child processes",
                  settings.quick ? "quick-tuning" : "tuning", device.name, device.driver_version,
                  settings.shapes.size()));
  if (report.continued)
    say(fmt::format("continuing the interrupted tuning stored in {} (`anycl tune --reset` starts over)",
                    report.path));
  // Measured against what the device runs without a tuning of its own: its database entry (the
  // generic one included), else CLBlast's own parameters. Candidates run in child processes on
  // CLBlast's own parameters plus the candidate, so only this process's baseline timing sees it.
  // The entry as this model would run it: with its `large` sets where the model's GEMMs are large.
  std::string entry;
  const std::optional<GemmTuning> baseline = database_tuning(device, &entry, nullptr, &settings.shapes);
  if (baseline) apply_tuning(rt, *baseline);
  report.baseline =
      baseline ? "anycl's tuning database entry " + entry : std::string("CLBlast's own parameters");
  report.against = baseline ? "the " + entry + " parameters" : std::string("CLBlast's own parameters");
  say("measured against " + report.baseline);

  options.stop = &halt;
  options.progress = say;
  const CandidateMeasurer children = detail::child_measurer(worker, device, settings.shapes, stopped);
  options.measure = [&](const std::vector<TuningCandidate>& list, double best_seconds, double budget,
                        const std::function<void(const CandidateResult&)>& on_result) {
    children(list, best_seconds, budget, [&](const CandidateResult& r) {
      ++candidates;
      if (r.exact && r.seconds > 0 && (best == 0 || r.seconds < best)) best = r.seconds;
      on_result(r);
    });
  };
  const bool keep_earlier = existing && !report.continued;
  GemmTuning last_stage;  // the result after the last stage done
  options.stage_done = [&](const GemmTuning& so_far) {
    last_stage = so_far;
    if (!keep_earlier || tuning_complete(so_far)) save_tuning(report.path, so_far);
  };
  GemmTuning t;
  try {
    t = tune_gemm(rt, options);
  } catch (const Error& e) {
    if (!halt) throw;
    say(fmt::format("stopped ({})", e.what()));
  }
  if (halt) {
    // What the finished (or begun) stages stored stays, and applies; an earlier complete tuning
    // stays in use instead when there was one.
    report.stopped = true;
    report.tuning = keep_earlier ? *existing : last_stage;
    if (!report.tuning.kernels.empty()) {
      apply_tuning(rt, report.tuning);
      detail::gemm_state(rt).tuned_here = true;
    }
    return report;
  }
  const bool against_entry = baseline && tuning_complete(*baseline);
  bool keep = against_entry && !detail::beats_by_margin(t.seconds_after, t.seconds_before);
  std::optional<detail::Confirmation> ab;
  if (against_entry && !keep) {
    // A tune confirms before it replaces the entry: its baseline was timed once, before the result, and
    // the result's candidates each once in a child process; a shared CPU drifts by more than the margin
    // in that time. The two sets in turn in this process, the model's GEMMs as trained with each;
    // medians compared. First use (quick) too: on Zen 4 limited to AVX, of four quick tunes in a row one
    // kept the generic entry, two found sets 1.13-1.17x faster that confirmed, and one a set that ran
    // the GEMMs 1.5x slower timed in turn (12.0 vs 8.0 ms per pass); a confirmation took 12-17 s there.
    say(
        fmt::format("confirming against {}: the model's GEMMs as trained with it and with the tuned set in "
                    "turn, {} rounds each…",
                    entry, detail::kConfirmRounds));
    const auto confirming = Clock::now();
    try {
      ab = detail::confirm_tuning(rt, *baseline, t, settings.shapes, detail::kConfirmRounds, say);
    } catch (const Error& e) {  // the tuned set could not run here: not confirmed
      say(fmt::format("      the confirmation failed ({})", e.what()));
      ab = detail::Confirmation{};
    }
    t.seconds += since(confirming);  // the confirmation counts in tuning's time
    keep = !ab->confirmed;
  }
  if (keep) {
    // A tuning (quick or full) that does not clearly beat the device's entry keeps the entry: a few
    // per cent measured once on a CPU is noise, and the entry was measured as training runs.
    if (ab && ab->same_sets)
      say(fmt::format("the set found is {}'s own: keeping it", entry));
    else if (ab && !(ab->current_median > 0 && ab->tuned_median > 0))
      say(fmt::format("the set found could not be confirmed against {}: keeping it", entry));
    else if (ab)
      say(fmt::format(
          "the set found did not beat {} by {:.0f} % timed in turn with it ({:.3f} vs {:.3f} ms per "
          "pass, medians of {} rounds): keeping it",
          entry, (detail::kReplaceMargin - 1) * 100, ab->tuned_median * 1e3, ab->current_median * 1e3,
          ab->tuned.size()));
    else
      say(fmt::format("no {} beat {} by {:.0f} % ({:.3f} vs {:.3f} ms per pass): keeping it",
                      settings.quick ? "shortlist set" : "set found", entry,
                      (detail::kReplaceMargin - 1) * 100, t.seconds_after * 1e3, t.seconds_before * 1e3));
    const double seconds = t.seconds,
                 before = ab && ab->current_median > 0 ? ab->current_median : t.seconds_before;
    t = *baseline;
    t.device = device.name, t.driver = device.driver_version, t.quick = settings.quick;
    t.seconds = seconds, t.seconds_before = t.seconds_after = before;
    save_tuning(report.path, t);
    apply_tuning(rt, detail::whole_tuning(t));  // a choice line the entry lacks: back to its default
    report.kept_entry = true;
  } else {
    if (ab) {  // confirmed: the times measured in turn are the ones recorded
      say(fmt::format("confirmed: {:.3f} → {:.3f} ms per pass against {} (medians of {} rounds in turn)",
                      ab->current_median * 1e3, ab->tuned_median * 1e3, report.against, ab->tuned.size()));
      t.seconds_before = ab->current_median, t.seconds_after = ab->tuned_median;
      apply_tuning(rt, t);
      save_tuning(report.path, t);
    }
    say(fmt::format("the model's GEMMs: {:.3f} → {:.3f} ms per pass against {} ({:.2f}x)",
                    t.seconds_before * 1e3, t.seconds_after * 1e3, report.against,
                    t.seconds_before / t.seconds_after));
  }
  detail::gemm_state(rt).tuned_here = true;
  report.tuning = t;
  return report;
}

int tune_worker_main(int argc, char** argv) {
  const std::vector<std::string> args(argv, argv + argc);
  if (args.size() == 5 && args[1] == "measure")
    return detail::run_measure_worker(select_device(args[2]), args[3], args[4]);
  if (args.size() == 4 && args[1] == "check")
    return detail::check_tuning_here(select_device(args[2]), args[3]);
  throw ValidationError(fmt::format(
      "usage: {} measure DEVICE CANDIDATES RESULTS | check DEVICE TUNING — anycl's tuning worker, started by "
      "the anycl library (anycl::tune, anycl_tune, anycl.tune, `anycl tune`), not by hand",
      kWorkerName));
}

}  // namespace anycl
