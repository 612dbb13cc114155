// The Runtime's private half: Boost.Compute's RAII handles for the device, context, queue and
// compiled programs, and the disk cache of program binaries. Public headers never show them
// (runtime.hpp holds a pointer to an incomplete RuntimeImpl); anycl's own code gets programs and
// kernels through detail::program() and detail::kernel() below.
#pragma once

#include "anycl/runtime.hpp"  // first: the OpenCL target (anycl/opencl.hpp) before Boost.Compute

#include <boost/compute/command_queue.hpp>
#include <boost/compute/context.hpp>
#include <boost/compute/device.hpp>
#include <boost/compute/kernel.hpp>
#include <boost/compute/program.hpp>

#include <map>
#include <memory>
#include <string>
#include <utility>

#include "runtime/disk_cache.hpp"

namespace anycl {

namespace compute = boost::compute;

namespace detail {

struct RuntimeImpl {
  compute::device device;
  compute::context context;
  compute::command_queue queue;
  std::map<std::pair<std::string, std::string>, compute::program> programs;  // (name, options)
  std::unique_ptr<DiskCache> cache;                                          // null: cache off
  bool store_binaries = true;  // compiled programs go to `cache` (RuntimeOptions::store_program_binaries)
  /// The elementwise kernels' layout (optimizer updates, dropout masks): a CPU runtime vectorises
  /// inside a work-item, so it gets 16 or 64 consecutive elements each; a GPU gets one element (a
  /// dropout mask) or four (an update) per lane, so that a warp's loads are consecutive. Set from the
  /// device type at start; a test sets it to run a GPU's form on a CPU runtime.
  bool lane_elementwise = false;
  /// BatchNorm's per-channel reductions (ops/batchnorm_split.hpp): one work-group a channel on a
  /// CPU runtime, split over several a channel elsewhere (a GPU has more compute units than a layer
  /// has channels). Set from the device type at start; a test sets it, and `forced_splits` (0: the
  /// groups a channel from the shape and the compute units), to run the split form on a CPU runtime.
  bool split_reductions = false;
  size_t forced_splits = 0;

  /// The private half of `rt`.
  static RuntimeImpl& of(Runtime& rt) noexcept { return *rt.impl_; }
  /// Program `name` of cl_kernels/ compiled with the default options plus `extra_options`
  /// (compiled, or loaded from the disk cache, on first use; kept for the runtime's life).
  static const compute::program& program(Runtime& rt, const std::string& name,
                                         const std::string& extra_options);

 private:
  static compute::program build(Runtime& rt, const std::string& name, const std::string& options);
};

/// A program of cl_kernels/ as RuntimeImpl::program compiles it.
inline const compute::program& program(Runtime& rt, const std::string& name,
                                       const std::string& extra_options = "") {
  return RuntimeImpl::program(rt, name, extra_options);
}

/// A new kernel object from a program compiled with the default options; OpenCLError naming the
/// kernel and program when it has no such kernel.
compute::kernel kernel(Runtime& rt, const std::string& program, const std::string& kernel_name);

}  // namespace detail
}  // namespace anycl
