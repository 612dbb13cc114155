// Runtime start-up: device selection, context and queue, and compilation of every embedded
// program through the disk cache (load binary → else build from source → store binary).
#include "runtime/runtime_impl.hpp"

#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <new>

#include "anycl/error.hpp"
#include "anycl/profile.hpp"
#include "blas/blas_programs.hpp"
#include "blas/tuning/stored_tuning.hpp"
#include "hash.hpp"
#include "runtime/device_select.hpp"
#include "runtime/driver_hints.hpp"
#include "runtime/kernel_sources.hpp"
#include "runtime/opencl_setup.hpp"
#include "util/process.hpp"

namespace anycl {
namespace {

constexpr const char* kCommonProgram = "common";
constexpr const char* kDefaultOptions = "-cl-std=CL1.2";

std::string full_source(const std::vector<detail::KernelSource>& sources, const std::string& name) {
  std::string common, own;
  bool found = false;
  for (const auto& s : sources) {
    if (s.name == kCommonProgram) common = s.source;
    if (s.name == name) own = s.source, found = true;
  }
  if (!found) throw ValidationError(fmt::format("no OpenCL program named '{}' in cl_kernels/", name));
  // common.cl (RNG, helpers) is prepended so every program compiles alone.
  return common + "\n#line 1\n" + own;
}

std::atomic<int> live_runtimes{0};  // Runtimes constructed and not yet destroyed

}  // namespace

detail::LastRuntimeHook& detail::last_runtime_hook() {
  static LastRuntimeHook hook = nullptr;
  return hook;
}

detail::StoredTuningHook& detail::stored_tuning_hook() {
  static StoredTuningHook hook = nullptr;
  return hook;
}

Runtime::Runtime(RuntimeOptions options) : options_(std::move(options)) {
  info_ = detail::select_device_or_env(options_.device_spec);
  start();
}

Runtime::Runtime(const DeviceInfo& device, RuntimeOptions options) : options_(std::move(options)) {
  info_ = device;
  start();
}

// Under the set-up lock: drivers create contexts and build programs unsafely from several threads at
// once on first use, and the last-runtime hook below must not run while another runtime starts.
void Runtime::start() {
  const auto setup = detail::lock_opencl_setup();
  impl_ = std::make_unique<detail::RuntimeImpl>();
  impl_->device = compute::device(info_.id, /*retain=*/true);
  cl_int status = CL_SUCCESS;
  cl_device_id id = info_.id;
  cl_context ctx = clCreateContext(nullptr, 1, &id, nullptr, nullptr, &status);
  detail::check_cl(status, "clCreateContext", info_.name);
  impl_->context = compute::context(ctx, /*retain=*/false);
  const cl_command_queue_properties props = options_.profiling ? CL_QUEUE_PROFILING_ENABLE : 0;
  cl_command_queue q = clCreateCommandQueue(ctx, id, props, &status);
  detail::check_cl(status, "clCreateCommandQueue", info_.name);
  impl_->queue = compute::command_queue(q, /*retain=*/false);
  impl_->lane_elementwise = info_.type == DeviceType::gpu;
  impl_->split_reductions = info_.type != DeviceType::cpu;
  if (options_.profiling) profile_ = std::make_unique<Profile>();
  row_kernels_ = info_.type == DeviceType::cpu &&
                 detail::is_pocl_platform(info_.vendor + " " + info_.platform_name, info_.platform_version);

  const std::string cache_dir = detail::DiskCache::default_dir();
  if (!cache_dir.empty()) impl_->cache = std::make_unique<detail::DiskCache>(cache_dir);
  stats_.cache_dir = cache_dir;
  const std::string driver_cache =
      detail::driver_program_cache(info_.vendor + " " + info_.platform_name, info_.platform_version);
  impl_->store_binaries = options_.store_program_binaries.value_or(driver_cache.empty());
  if (impl_->cache && !impl_->store_binaries) stats_.driver_cache = driver_cache;

  apply_stored_tuning();
  const auto start = std::chrono::steady_clock::now();
  for (const auto& name : program_names()) detail::program(*this, name);
  stats_.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ++live_runtimes;
  started_ = true;
}

// No kernel may outlive its runtime: an exit path (an error, a stop) that tears down while the
// device still runs enqueued work would free what the work uses. Errors are ignored: a destructor
// has nobody to tell, and the queue is released either way.
// Each runtime to go empties CLBlast's program cache, the last all its caches (blas_programs.hpp).
// In a child forked from the process that made this runtime the driver is gone (calls would hang):
// its handles are left behind, not released.
Runtime::~Runtime() {
  if (detail::platform::forked_after_watch()) {
    (void)profile_.release();
    (void)impl_.release();
    // Left behind on purpose, as the handles above.
    (void)new (std::nothrow) DeviceBuffer(std::move(workspace_));  // NOLINT(cppcoreguidelines-owning-memory)
    return;
  }
  if (impl_ && impl_->queue.get() != nullptr) clFinish(impl_->queue.get());
  profile_.reset();  // releases its events before the queue and context go
  if (!started_) return;
  const std::lock_guard<std::recursive_mutex> setup(detail::opencl_setup_mutex());
  const bool last = --live_runtimes == 0;
  if (const detail::LastRuntimeHook hook = detail::last_runtime_hook()) hook(last);
}

std::vector<std::string> Runtime::program_names() const {
  std::vector<std::string> names;
  for (const auto& s : detail::embedded_kernel_sources())
    if (s.name != kCommonProgram) names.push_back(s.name);
  return names;
}

cl_context Runtime::context() const noexcept { return impl_->context.get(); }

cl_command_queue Runtime::queue() const noexcept { return impl_->queue.get(); }

const compute::program& detail::RuntimeImpl::program(Runtime& rt, const std::string& name,
                                                     const std::string& extra_options) {
  const std::string options =
      extra_options.empty() ? kDefaultOptions : std::string(kDefaultOptions) + " " + extra_options;
  auto key = std::make_pair(name, options);
  auto& programs = rt.impl_->programs;
  auto it = programs.find(key);
  if (it == programs.end()) it = programs.emplace(key, build(rt, name, options)).first;
  return it->second;
}

compute::kernel detail::kernel(Runtime& rt, const std::string& program_name, const std::string& kernel_name) {
  cl_int status = CL_SUCCESS;
  cl_kernel k = clCreateKernel(program(rt, program_name).get(), kernel_name.c_str(), &status);
  check_cl(status, "clCreateKernel", fmt::format("{} (program {})", kernel_name, program_name));
  return compute::kernel(k, /*retain=*/false);
}

compute::program detail::RuntimeImpl::build(Runtime& rt, const std::string& name,
                                            const std::string& options) {
  const DeviceInfo& info = rt.info_;
  CompileStats& stats = rt.stats_;
  DiskCache* cache = rt.impl_->cache.get();
  const compute::context& context = rt.impl_->context;
  auto log = [&rt](const std::string& line) { rt.log(line); };
  const auto t0 = std::chrono::steady_clock::now();
  const std::string source = full_source(detail::kernel_sources(), name);
  uint64_t h = detail::device_hash(info);
  for (const std::string* part : {&options, &source}) h = detail::fnv1a(*part, h);
  const std::string key = fmt::format("{}-{:016x}", name, h);
  ++stats.programs;
  auto elapsed_ms = [&] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };

  bool refused = false;
  if (cache) {
    if (auto binary = cache->get(key)) {
      try {
        compute::program p = compute::program::create_with_binary(*binary, context);
        p.build(options);
        ++stats.cache_hits;
        log(fmt::format("program {}: loaded from cache {} ({:.1f} ms)", name, cache->path(key),
                        elapsed_ms()));
        return p;
      } catch (const compute::opencl_error&) {
        refused = true;  // replaced below, whether or not this driver's programs are stored
        log(fmt::format("program {}: cached binary did not load; rebuilding from source", name));
      }
    }
  }

  compute::program p = compute::program::create_with_source(source, context);
  const cl_int status = clBuildProgram(p.get(), 1, &info.id, options.c_str(), nullptr, nullptr);
  if (status != CL_SUCCESS) {
    std::string build_log;
    try {
      build_log = p.build_log();
    } catch (const compute::opencl_error&) {
      build_log = "(no build log available)";
    }
    // A driver that cannot build anything (PoCL without a writable cache) says little in its log.
    const std::string hint = detail::driver_setup_hint(info.platform_name, info.platform_version);
    if (!hint.empty()) build_log += (build_log.empty() || build_log.back() == '\n' ? "" : "\n") + hint;
    if (status == CL_BUILD_PROGRAM_FAILURE || status == CL_INVALID_BUILD_OPTIONS)
      throw BuildError(name + ".cl", options, info.name, build_log);
    throw OpenCLError(status, "clBuildProgram", fmt::format("{}.cl on {}: {}", name, info.name, build_log));
  }
  ++stats.cache_misses;
  std::string stored;
  if (cache && (rt.impl_->store_binaries || refused))
    stored = cache->put(key, p.binary()) ? " and cached" : " (cache not writable: " + cache->dir() + ")";
  else if (!stats.driver_cache.empty())
    stored = " (the driver keeps it in its own cache, " + stats.driver_cache + ")";
  log(fmt::format("program {}: compiled from source{} ({:.1f} ms)", name, stored, elapsed_ms()));
  return p;
}

DeviceBuffer& Runtime::workspace(size_t bytes) {
  if (!workspace_ || workspace_.bytes() < bytes)
    workspace_ = DeviceBuffer(*this, std::max<size_t>(bytes, 1), "CLBlast workspace");
  return workspace_;
}

cl_event Runtime::enqueue_marker(const char* what) {
  cl_event marker = nullptr;
  detail::check_cl(clEnqueueMarkerWithWaitList(queue(), 0, nullptr, &marker), "clEnqueueMarkerWithWaitList",
                   what);
  return marker;
}

void Runtime::wait_queued(const char* what) {
  cl_event marker = enqueue_marker(what);
  const cl_int status = clWaitForEvents(1, &marker);
  clReleaseEvent(marker);
  detail::check_cl(status, "clWaitForEvents", what);
}

void Runtime::finish() {
  ++counters_.host_waits;
  wait_queued("waiting for the queue");  // first: clFinish alone may spin (runtime.hpp)
  detail::check_cl(clFinish(queue()), "clFinish", info_.name);
}

void Runtime::apply_stored_tuning() {
  // The GEMM layer installs the hook when it is linked (stored_tuning.cpp); the core alone has no
  // CLBlast, so nothing to tune.
  if (!options_.apply_stored_tuning) return;
  if (const detail::StoredTuningHook hook = detail::stored_tuning_hook())
    stats_.tuning_file = hook(*this, impl_->cache.get(), [this](const std::string& line) { log(line); });
}

void Runtime::log(const std::string& line) const {
  if (options_.log) options_.log(line);
}

}  // namespace anycl
