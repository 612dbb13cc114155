// The step breakdown table: the median profiled step, one row per command in enqueue order.
#include "bench_breakdown.hpp"

#include <fmt/format.h>

#include "anycl/profile.hpp"
#include "anycl/util/atomic_file.hpp"

namespace anycl::cli {

Table step_breakdown_table(Runtime& rt, int64_t first_step, const std::string& trace_path) {
  if (!trace_path.empty()) write_file_atomically(trace_path, chrome_trace({&rt}));
  const StepBreakdown b = step_breakdown(rt.profile()->events(), first_step);
  Table t;
  t.name = "breakdown";
  t.title = fmt::format("One training step on the device, command by command (median of {} profiled steps)",
                        b.steps);
  t.columns = {"#", "command (layer, pass: kernel, shape)", "kind", "ms", "share %"};
  for (size_t i = 0; i < b.rows.size(); ++i) {
    const BreakdownRow& r = b.rows[i];
    t.rows.push_back({Cell::num(double(i + 1), 0), Cell::str(r.name), Cell::str(r.category),
                      Cell::num(r.median_ms, 3), Cell::num(100 * r.share, 1)});
  }
  auto total = [&](const char* what, const char* kind, double ms) {
    t.rows.push_back({Cell::none(), Cell::str(what), Cell::str(kind), Cell::num(ms, 3),
                      Cell::num(b.step_ms > 0 ? 100 * ms / b.step_ms : 0, 1)});
  };
  total("CLBlast GEMMs", "gemm", b.gemm_ms);
  total("CLBlast transposes", "transpose", b.transpose_ms);
  total("anycl kernels", "kernel", b.kernel_ms);
  total("gaps (device idle between commands)", "gap", b.gap_ms);
  total("step (first start → last end)", "step", b.step_ms);
  t.notes.push_back(
      fmt::format("non-GEMM share of the step (anycl kernels + gaps, median over the steps): {:.1f} %; "
                  "CLBlast's GEMMs and "
                  "transposes are the rest",
                  100 * b.non_gemm_share));
  t.notes.push_back(
      "times from OpenCL profiling events (CL_QUEUE_PROFILING_ENABLE); medians of each line need not add up "
      "to the median step");
  t.notes.push_back(
      "a CLBlast call '+ its copies' (or '+ its im2col') runs kernels of its own before its GEMM: its time "
      "runs from the end of the command before it, those kernels included");
  if (!trace_path.empty())
    t.notes.push_back("the whole profile (warm-up included) is in " + trace_path +
                      " (Chrome trace JSON: open it in https://ui.perfetto.dev)");
  return t;
}

}  // namespace anycl::cli
