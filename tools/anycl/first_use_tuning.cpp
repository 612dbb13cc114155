// First-use tuning before training (see the header): the library tunes, the command prints.
#include "first_use_tuning.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <set>

#include "anycl/blas/tune.hpp"
#include "anycl/error.hpp"

namespace anycl::cli {

void run_first_use_tuning(const std::vector<Runtime*>& runtimes, const Sequential& model, size_t batch,
                          bool quiet) {
  std::set<size_t> done;
  for (Runtime* rt : runtimes) {
    const DeviceInfo& device = rt->info();
    if (!done.insert(device.index).second) continue;
    if (const std::string why = first_use_tuning_skipped(device); !why.empty()) {
      if (why == kGpuUsesClblastDatabase && !quiet)
        fmt::print("{}: no first-use tuning, {}\n", device.name, why);
      continue;
    }
    if (!quiet)
      fmt::print(
          "first use of {} (driver {}) without a tuning: measuring a shortlist of CLBlast parameter sets at "
          "this model's GEMMs (about two minutes, once per device and driver; --no-autotune or "
          "ANYCL_AUTOTUNE=off skips it)\n",
          device.name, device.driver_version);
    std::fflush(stdout);
    std::optional<TuneReport> report;
    try {
      report = tune_on_first_use(*rt, model_gemm_shapes(model, batch, rt), [quiet](const TuneProgress& p) {
        if (!quiet) fmt::print("{}\n", p.line), std::fflush(stdout);
        return true;
      });
    } catch (const Error& e) {
      fmt::print(stderr,
                 "anycl train: first-use tuning failed on {} ({}); training goes on with the parameters it "
                 "had — `anycl tune` retries it\n",
                 device.name, e.what());
      continue;
    }
    if (!report) continue;
    for (Runtime* other : runtimes)
      if (other != rt && other->info().index == device.index) apply_tuning(*other, report->tuning);
    const GemmTuning& t = report->tuning;
    if (quiet) continue;
    if (report->kept_entry)
      fmt::print(
          "first-use tuning: the model's GEMMs take {:.3f} ms per pass with {}, and no shortlist set beat "
          "them by 5 %: kept, decided in {:.0f} s; stored for this device and driver\n",
          t.seconds_before * 1e3, report->against, t.seconds);
    else
      fmt::print(
          "first-use tuning: the model's GEMMs take {:.3f} → {:.3f} ms per pass against {} ({:.2f}x), found "
          "in {:.0f} s; stored for this device and driver\n",
          t.seconds_before * 1e3, t.seconds_after * 1e3, report->against, t.seconds_before / t.seconds_after,
          t.seconds);
  }
}

}  // namespace anycl::cli
