// The profiler: OpenCL profiling events read back once the commands finished, mapped onto the host's
// steady clock, written as Chrome trace-event JSON and summarised per training step.
#include "anycl/profile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "anycl/error.hpp"
#include "anycl/runtime.hpp"

namespace anycl {
namespace {

int64_t steady_ns(Profile::Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

bool finished(cl_event e) {
  cl_int status = CL_QUEUED;
  return clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, nullptr) ==
             CL_SUCCESS &&
         status <= CL_COMPLETE;  // CL_COMPLETE is 0; errors are negative
}

uint64_t profiling_ns(cl_event e, cl_profiling_info what) {
  cl_ulong ns = 0;
  return clGetEventProfilingInfo(e, what, sizeof ns, &ns, nullptr) == CL_SUCCESS ? ns : 0;
}

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (const char c : s) {
    if (c == '"' || c == '\\') {
      out += '\\', out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", int(c));
    } else {
      out += c;
    }
  }
  return out + "\"";
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

Profile::~Profile() {
  for (const Pending& p : pending_) {
    clReleaseEvent(p.event);
    if (p.since) clReleaseEvent(p.since);
  }
}

void Profile::record(cl_event event, std::string name, const char* category, cl_event since) {
  const int64_t now = steady_ns(Clock::now());
  if (!label_.empty()) name = label_ + ": " + name;
  pending_.push_back({event, since, std::move(name), category, step_, now});
  if (pending_.size() >= 4096) resolve(false);  // a long run keeps only unread events pending
}

void Profile::host_phase(std::string name, Clock::time_point begin, Clock::time_point end) {
  TraceEvent e;
  e.name = std::move(name);
  e.category = "host";
  e.step = step_;
  e.start_us = double(steady_ns(begin)) * 1e-3;
  e.duration_us = std::chrono::duration<double, std::micro>(end - begin).count();
  host_.push_back(std::move(e));
}

void Profile::resolve(bool all) {
  std::vector<Pending> still;
  for (Pending& p : pending_) {
    if (!all && !finished(p.event)) {
      still.push_back(std::move(p));
      continue;
    }
    if (all) clWaitForEvents(1, &p.event);  // after Runtime::finish this returns at once
    const uint64_t queued = profiling_ns(p.event, CL_PROFILING_COMMAND_QUEUED),
                   end = profiling_ns(p.event, CL_PROFILING_COMMAND_END);
    uint64_t start = profiling_ns(p.event, CL_PROFILING_COMMAND_START);
    if (p.since) {  // the marker has finished too: the queue is in order
      if (all) clWaitForEvents(1, &p.since);
      const uint64_t marker_end = profiling_ns(p.since, CL_PROFILING_COMMAND_END);
      if (marker_end != 0 && marker_end <= start) start = marker_end;
      clReleaseEvent(p.since);
    }
    clReleaseEvent(p.event);
    if (start == 0 || end < start) continue;  // no times (a failed command): nothing to show
    if (queued) offset_ns_ = std::min<int64_t>(offset_ns_, p.host_ns - int64_t(queued));
    Device d{{std::move(p.name), p.category, p.step, 0, double(end - start) * 1e-3}, start, end};
    device_.push_back(std::move(d));
  }
  pending_ = std::move(still);
}

std::vector<TraceEvent> Profile::events() {
  resolve(true);
  std::vector<TraceEvent> out = host_;
  const int64_t offset = offset_ns_ == INT64_MAX ? 0 : offset_ns_;
  for (const Device& d : device_) {
    out.push_back(d.event);
    out.back().start_us = double(int64_t(d.start_ns) + offset) * 1e-3;
  }
  std::stable_sort(out.begin(), out.end(),
                   [](const TraceEvent& a, const TraceEvent& b) { return a.start_us < b.start_us; });
  return out;
}

ProfileLabel::~ProfileLabel() {
  if (profile_) profile_->label_ = std::move(saved_);
}

HostPhase::HostPhase(Profile* profile, const char* name)
    : profile_(profile),
      name_(name),
      begin_(profile ? Profile::Clock::now() : Profile::Clock::time_point{}) {}

HostPhase::~HostPhase() {
  if (profile_) profile_->host_phase(name_, begin_, Profile::Clock::now());
}

std::string chrome_trace(const std::vector<Runtime*>& runtimes) {
  std::vector<std::vector<TraceEvent>> per;
  double origin = -1;
  for (Runtime* rt : runtimes) {
    if (!rt->profile())
      throw ValidationError(fmt::format(
          "no profile on {}: create the Runtime with RuntimeOptions::profiling = true", rt->info().name));
    rt->finish();
    per.push_back(rt->profile()->events());
    for (const TraceEvent& e : per.back())
      if (origin < 0 || e.start_us < origin) origin = e.start_us;
  }
  if (origin < 0) origin = 0;
  // pid 1 is the process; each runtime's queue is a thread track, host phases another.
  std::string out = "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
  out += R"({"ph":"M","pid":1,"name":"process_name","args":{"name":"anycl"}})";
  const int host_tid = int(runtimes.size()) + 1;
  out += fmt::format(
      ",\n{{\"ph\":\"M\",\"pid\":1,\"tid\":{},\"name\":\"thread_name\",\"args\":{{\"name\":"
      "\"host phases\"}}}}",
      host_tid);
  for (size_t r = 0; r < runtimes.size(); ++r)
    out += fmt::format(
        ",\n{{\"ph\":\"M\",\"pid\":1,\"tid\":{},\"name\":\"thread_name\",\"args\":{{\"name\":{}}}}}", r + 1,
        json_string(fmt::format("queue {} ({})", r, runtimes[r]->info().name)));
  for (size_t r = 0; r < per.size(); ++r)
    for (const TraceEvent& e : per[r]) {
      const int tid = e.category == "host" ? host_tid : int(r + 1);
      out += fmt::format(
          ",\n{{\"ph\":\"X\",\"pid\":1,\"tid\":{},\"name\":{},\"cat\":\"{}\",\"ts\":{:.3f},\"dur\":{:.3f},"
          "\"args\":{{\"step\":{}}}}}",
          tid, json_string(e.name), e.category, e.start_us - origin, e.duration_us, e.step);
    }
  out += "\n]}\n";
  return out;
}

StepBreakdown step_breakdown(const std::vector<TraceEvent>& events, int64_t first_step) {
  std::map<int64_t, std::vector<const TraceEvent*>> steps;
  for (const TraceEvent& e : events)
    if (e.step >= first_step && e.category != "host") steps[e.step].push_back(&e);
  // The steps that ran the most common sequence of commands (a last partial batch may differ).
  std::map<std::vector<std::string>, size_t> shapes;
  for (const auto& [step, list] : steps) {
    std::vector<std::string> names;
    for (const TraceEvent* e : list) names.push_back(e->name);
    ++shapes[names];
  }
  StepBreakdown b;
  if (shapes.empty()) return b;
  const auto common = std::max_element(shapes.begin(), shapes.end(), [](auto& x, auto& y) {
                        return x.second < y.second;
                      })->first;
  std::vector<std::vector<double>> per_row(common.size());
  std::vector<double> step_ms, gemm, kernel, transpose, gap, non_gemm;
  for (const auto& [step, list] : steps) {
    if (list.size() != common.size()) continue;
    bool same = true;
    for (size_t i = 0; i < list.size() && same; ++i) same = list[i]->name == common[i];
    if (!same) continue;
    double begin = list.front()->start_us, end = begin, busy[3] = {0, 0, 0};
    for (size_t i = 0; i < list.size(); ++i) {
      const TraceEvent& e = *list[i];
      end = std::max(end, e.start_us + e.duration_us);
      per_row[i].push_back(e.duration_us * 1e-3);
      busy[e.category == "gemm" ? 0 : e.category == "transpose" ? 2 : 1] += e.duration_us * 1e-3;
    }
    const double total = (end - begin) * 1e-3;
    step_ms.push_back(total);
    gemm.push_back(busy[0]), kernel.push_back(busy[1]), transpose.push_back(busy[2]);
    gap.push_back(std::max(0.0, total - busy[0] - busy[1] - busy[2]));
    non_gemm.push_back(total > 0 ? (busy[1] + gap.back()) / total : 0);
    ++b.steps;
  }
  b.step_ms = median(step_ms), b.gemm_ms = median(gemm), b.kernel_ms = median(kernel);
  b.transpose_ms = median(transpose), b.gap_ms = median(gap), b.non_gemm_share = median(non_gemm);
  for (size_t i = 0; i < common.size(); ++i) {
    const TraceEvent* first = nullptr;
    for (const auto& [step, list] : steps)
      if (list.size() == common.size()) first = list[i];
    BreakdownRow row;
    row.name = common[i];
    row.category = first ? first->category : "";
    row.median_ms = median(per_row[i]);
    row.share = b.step_ms > 0 ? row.median_ms / b.step_ms : 0;
    b.rows.push_back(std::move(row));
  }
  return b;
}

}  // namespace anycl
