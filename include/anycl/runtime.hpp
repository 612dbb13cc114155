// The Runtime: one selected device with its context, in-order queue and compiled kernels.
// Created once, passed by reference. Compiles every cl_kernels/*.cl program at start-up, through
// an on-disk cache of program binaries. Threads: constructing Runtimes from several threads at once
// is safe (start-up runs under one process-wide lock); a Runtime and what is built on it are then
// used by one thread at a time (docs/guarantees.md, "Threads"). In a child forked after OpenCL was
// used, constructing one throws UnsupportedError (the driver does not survive a fork). What it holds beyond
// anycl's own types (Boost.Compute's handles, the program and disk caches) stays in src/
// (runtime_impl.hpp); an application reaches the device through the raw OpenCL handles.
//
//   anycl::Runtime rt;                       // best device, or $ANYCL_DEVICE
//   clEnqueueBarrierWithWaitList(rt.queue(), 0, nullptr, nullptr);
#pragma once

#include "anycl/opencl.hpp"

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "anycl/device.hpp"
#include "anycl/device_buffer.hpp"

namespace anycl {

/// How a Runtime starts.
struct RuntimeOptions {
  std::string device_spec;  // "" → $ANYCL_DEVICE → the best device (see select_device)
  bool profiling = false;   // queue with CL_QUEUE_PROFILING_ENABLE and a Profile of every launch
  std::function<void(const std::string&)> log;  // receives one line per compiled or cached program
  bool apply_stored_tuning = true;  // false: CLBlast's own parameters (tuning measures against them)
  /// Whether programs compiled from source go to anycl's disk cache (entries there are loaded either
  /// way). Unset: yes, except where the driver keeps them in a cache of its own (PoCL, named in
  /// CompileStats::driver_cache), from which reading a program's binary back compiles every kernel
  /// once more; true (as `anycl cache warm`) or false decides for every driver.
  std::optional<bool> store_program_binaries{};
};

/// What start-up compilation cost: a second start with a warm cache shows misses == 0 (where anycl
/// stores the programs; on PoCL, which keeps them itself, after `anycl cache warm`).
struct CompileStats {
  size_t programs = 0;
  size_t cache_hits = 0;
  size_t cache_misses = 0;   // programs compiled from source
  double seconds = 0.0;      // wall time spent loading/compiling programs
  std::string cache_dir;     // empty when the disk cache is off
  std::string tuning_file;   // the `anycl tune` file (or database entry) applied at start-up; empty when none
  std::string driver_cache;  // the driver's own folder of compiled programs when anycl stores none (PoCL)
};

/// What the runtime has been asked to do: the figures behind "launches and host waits per step".
struct RuntimeCounters {
  uint64_t kernel_launches = 0;  // anycl's own kernels
  uint64_t gemm_calls = 0;       // CLBlast GEMM calls (each is one or more CLBlast kernels)
  uint64_t transposes = 0;       // of kernel_launches, those of anycl's transpose kernel
  uint64_t host_waits = 0;       // blocking calls: finish, blocking reads and writes
  uint64_t run_ahead_waits = 0;  // waits for an earlier step while later ones stay queued (no drain)
};

class Profile;
class Runtime;
namespace detail {
struct RuntimeImpl;  // src/runtime/runtime_impl.hpp
struct GemmState;    // src/blas/gemm_plan.hpp: how this runtime's GEMMs run, the GEMM planner's own
GemmState& gemm_state(Runtime& rt);
}  // namespace detail

class Runtime {
 public:
  /// Selects the device, creates context and queue, compiles all embedded programs.
  explicit Runtime(RuntimeOptions options = {});
  /// The same on a device from list_devices() (options.device_spec is ignored).
  explicit Runtime(const DeviceInfo& device, RuntimeOptions options = {});
  /// Releases queue, context and programs (waits for nothing; never throws).
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  /// The selected device's properties.
  const DeviceInfo& info() const noexcept { return info_; }
  /// The raw OpenCL handles, for an application's own OpenCL (or Boost.Compute) code on the same
  /// device: owned by the runtime and valid while it lives (clRetain* one to keep it longer).
  cl_device_id device() const noexcept { return info_.id; }
  /// The context, and the in-order queue every op enqueues on.
  cl_context context() const noexcept;
  cl_command_queue queue() const noexcept;

  /// Names of the programs built from cl_kernels/ (every file but common.cl).
  std::vector<std::string> program_names() const;

  /// Compile figures since start-up.
  const CompileStats& stats() const noexcept { return stats_; }
  /// Counters of launches and host waits since start-up (mutable: ops count through it).
  RuntimeCounters& counters() noexcept { return counters_; }
  /// A device buffer of at least `bytes`, reused between calls (CLBlast's temporary buffer).
  DeviceBuffer& workspace(size_t bytes);
  /// The timeline of every launch (anycl/profile.hpp) when made with `profiling`; null otherwise.
  Profile* profile() noexcept { return profile_.get(); }
  /// Blocks until everything queued has finished.
  void finish();
  /// Blocks until everything queued so far has finished, sleeping on a marker event: finish() and
  /// every blocking read wait here first, because Intel's OpenCL CPU runtime spins the calling
  /// thread in clFinish and in a blocking read, taking a core from its own workers (the reference
  /// CNN's last step of an epoch ran at half speed on 2 cores, 330 ms against 170). `what` names
  /// the wait in errors.
  void wait_queued(const char* what);
  /// Enqueues a marker after everything queued so far and returns its event (the caller waits
  /// for it or asks for a callback, and releases it). `what` names it in errors.
  cl_event enqueue_marker(const char* what);
  /// Whether kernels with a form for each run col2im as one work-item per image row looping over
  /// its pixels (true on PoCL's CPU driver, which runs a work-group's items as a loop and
  /// vectorizes only a kernel's innermost loop: the reference CNN's col2im 13.5 -> 7.5 ms on the
  /// AVX2 class) or one work-item per pixel (elsewhere: Intel's CPU runtime vectorizes across
  /// work-items, 7.0 ms that way against 24.6, and so do GPUs). Set from the driver at start;
  /// tests set it to check both forms on one device. Some kernels run their row form on every CPU
  /// driver whatever this says, with a vec_type_hint that keeps Intel's compiler from vectorizing
  /// across their work-items (Winograd's stages, conv_direct's forward, Conv2D's output backward).
  bool row_kernels() const noexcept { return row_kernels_; }
  void set_row_kernels(bool on) noexcept { row_kernels_ = on; }

 private:
  friend struct detail::RuntimeImpl;  // compiles programs into impl_ (runtime.cpp)
  friend detail::GemmState& detail::gemm_state(Runtime& rt);
  void start();  // context, queue, cache, tuning and programs for info_
  void apply_stored_tuning();
  void log(const std::string& line) const;

  RuntimeOptions options_;
  DeviceInfo info_;
  std::unique_ptr<detail::RuntimeImpl> impl_;  // before what holds device memory or events: freed last
  std::unique_ptr<Profile> profile_;
  CompileStats stats_;
  RuntimeCounters counters_;
  DeviceBuffer workspace_;
  bool row_kernels_ = false;
  std::shared_ptr<detail::GemmState> gemm_state_;  // made by the GEMM planner on first use
  bool started_ = false;                           // counted among the live runtimes (runtime.cpp)
};

}  // namespace anycl
