// The device timeline of a Runtime made with RuntimeOptions::profiling: every anycl kernel, CLBlast
// call and transpose enqueued on its queue, named (layer, pass, kernel, shape) and timed by OpenCL
// profiling events, plus host phases (data, evaluation, checkpoint) on a track of their own. Off by
// default: without profiling no event is requested and nothing is recorded.
//
//   anycl::Runtime rt({.profiling = true});   ...train...   rt.finish();
//   std::string json = anycl::chrome_trace({&rt});   // opens in Perfetto / chrome://tracing
#pragma once

#include "anycl/opencl.hpp"

#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace anycl {

class Runtime;

/// One timed span: a device command (times from its OpenCL profiling event) or a host phase.
struct TraceEvent {
  std::string name;      // "layer 1 dense forward: SGEMM NN 128x512x784"
  std::string category;  // "kernel" (anycl), "gemm", "transpose" (CLBlast) or "host"
  int64_t step = -1;     // the training step it belongs to (Profile::set_step); -1 outside steps
  double start_us = 0;   // on the host's steady clock (µs), device times mapped onto it
  double duration_us = 0;
};

/// What one Runtime recorded. Device times are read when asked for, so ask after Runtime::finish().
class Profile {
 public:
  using Clock = std::chrono::steady_clock;
  Profile() = default;
  ~Profile();
  Profile(const Profile&) = delete;
  Profile& operator=(const Profile&) = delete;

  /// Takes `event` (a command just enqueued; released here) under `name`. With `since` (a marker
  /// enqueued just before the commands `event` ends; released here) the span starts where the marker
  /// ended instead: a CLBlast call whose event is only its last kernel's is shown whole, its own copy
  /// and pad kernels included.
  void record(cl_event event, std::string name, const char* category, cl_event since = nullptr);
  /// A host phase from `begin` to `end`.
  void host_phase(std::string name, Clock::time_point begin, Clock::time_point end);
  /// The label launches get while set (ProfileLabel sets it), and the step they belong to.
  const std::string& label() const noexcept { return label_; }
  void set_step(int64_t step) noexcept { step_ = step; }
  /// Everything recorded, in start order; device commands not finished yet are left out.
  std::vector<TraceEvent> events();

 private:
  friend class ProfileLabel;
  struct Pending {
    cl_event event;
    cl_event since;  // null, or the marker the span starts at
    std::string name;
    const char* category;
    int64_t step;
    int64_t host_ns;  // steady clock just after the enqueue returned
  };
  struct Device {
    TraceEvent event;
    uint64_t start_ns, end_ns;
  };
  void resolve(bool all);  // reads finished events' times (all: every pending one)

  std::vector<Pending> pending_;
  std::vector<Device> device_;
  std::vector<TraceEvent> host_;
  std::string label_;
  int64_t step_ = -1;
  int64_t offset_ns_ = INT64_MAX;  // host steady ns − device ns, the least seen (queued → enqueue return)
};

/// Sets the profile label for launches on `rt` while it lives; free when profiling is off (the
/// label is built only then).
class ProfileLabel {
 public:
  template <typename MakeLabel>
  ProfileLabel(Profile* profile, MakeLabel&& make) : profile_(profile) {
    if (profile_) saved_ = std::exchange(profile_->label_, make());
  }
  ~ProfileLabel();
  ProfileLabel(const ProfileLabel&) = delete;
  ProfileLabel& operator=(const ProfileLabel&) = delete;

 private:
  Profile* profile_;
  std::string saved_;
};

/// Times a host phase (e.g. "evaluation") into `profile` while it lives; nothing when null.
class HostPhase {
 public:
  HostPhase(Profile* profile, const char* name);
  ~HostPhase();
  HostPhase(const HostPhase&) = delete;
  HostPhase& operator=(const HostPhase&) = delete;

 private:
  Profile* profile_;
  const char* name_;
  Profile::Clock::time_point begin_;
};

/// The runtimes' profiles in Chrome's trace-event JSON: one track per runtime's queue (named by its
/// device), host phases on their own track. Finishes each runtime's queue first.
std::string chrome_trace(const std::vector<Runtime*>& runtimes);

/// One line of a step breakdown: the command at `position` in every profiled step.
struct BreakdownRow {
  std::string name, category;
  double median_ms = 0, share = 0;  // share of the step's device time (first start → last end)
};
/// The median step, command by command, over the steps that ran the same commands.
struct StepBreakdown {
  size_t steps = 0;  // steps measured
  std::vector<BreakdownRow> rows;
  double step_ms = 0, gemm_ms = 0, kernel_ms = 0, transpose_ms = 0, gap_ms = 0;  // medians
  double non_gemm_share = 0;  // median over the steps of (anycl kernels + gaps) / step
};
/// The breakdown of steps `first_step`… in `events` (from Profile::events()).
StepBreakdown step_breakdown(const std::vector<TraceEvent>& events, int64_t first_step = 0);

}  // namespace anycl
