// Setting kernel arguments and launching 1-D ranges with every status checked and the kernel
// named in the error. Ops set their arguments and launch through these.
#pragma once

#include <CL/cl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "anycl/error.hpp"
#include "anycl/profile.hpp"
#include "runtime/runtime_impl.hpp"

namespace anycl::detail {

/// A size as a kernel's uint argument; throws when it does not fit in 32 bits.
inline cl_uint u32(size_t value, const char* what) {
  if (value > std::numeric_limits<cl_uint>::max())
    throw ValidationError(fmt::format("{} = {} does not fit the kernels' 32-bit indices", what, value));
  return cl_uint(value);
}

inline void set_arg(compute::kernel& k, cl_uint index, const void* value, size_t size) {
  const cl_int status = clSetKernelArg(k.get(), index, size, value);
  if (status != CL_SUCCESS)
    throw OpenCLError(status, "clSetKernelArg", fmt::format("{} argument {}", k.name(), index));
}

/// Sets arguments 0..n-1 in order (cl_mem, cl_uint, cl_int, cl_float values).
template <typename... Args>
void set_args(compute::kernel& k, const Args&... args) {
  cl_uint index = 0;
  (set_arg(k, index++, &args, sizeof(args)), ...);
}

/// Rounds n up to a multiple of `local`.
inline size_t round_up(size_t n, size_t local) { return (n + local - 1) / local * local; }

/// The largest work-group `k` runs with on the runtime's device: CL_KERNEL_WORK_GROUP_SIZE, which
/// can be below the device's maximum (registers, local memory).
inline size_t kernel_work_group_size(Runtime& rt, const compute::kernel& k) {
  size_t size = 0;
  check_cl(clGetKernelWorkGroupInfo(k.get(), rt.info().id, CL_KERNEL_WORK_GROUP_SIZE, sizeof(size), &size,
                                    nullptr),
           "clGetKernelWorkGroupInfo", k.name());
  return size;
}

/// A new kernel object `name` from program `program` compiled with `options` added to the defaults
/// (a variant: -DPER_ITEM=4, -DBC=32 -DBR=8, …); detail::kernel() when `options` is empty.
inline compute::kernel kernel_with_options(Runtime& rt, const std::string& program, const std::string& name,
                                           const std::string& options) {
  if (options.empty()) return kernel(rt, program, name);
  cl_int status = CL_SUCCESS;
  cl_kernel k = clCreateKernel(detail::program(rt, program, options).get(), name.c_str(), &status);
  check_cl(status, "clCreateKernel", name);
  return compute::kernel(k, false);
}

/// A kernel that runs as ONE work-group of WG work-items (a power of two: its reduction halves
/// it; a reqd_work_group_size of WG, set by -DWG, default 256) using `local_floats_per_item`
/// floats of local memory per work-item. Starts from what the device allows, then asks the
/// compiled kernel (CL_KERNEL_WORK_GROUP_SIZE may be lower) and rebuilds smaller until it fits.
inline compute::kernel single_group_kernel(Runtime& rt, const std::string& program, const std::string& name,
                                           size_t local_floats_per_item, size_t& work_group) {
  const DeviceInfo& info = rt.info();
  work_group = 256;
  while (work_group > 1 && (work_group > info.max_work_group_size ||
                            local_floats_per_item * work_group * sizeof(float) > info.local_mem_bytes))
    work_group /= 2;
  for (;;) {
    compute::kernel kernel =
        kernel_with_options(rt, program, name, work_group == 256 ? "" : fmt::format("-DWG={}", work_group));
    const size_t fits = kernel_work_group_size(rt, kernel);
    if (work_group <= fits || work_group == 1) return kernel;
    while (work_group > fits && work_group > 1) work_group /= 2;
  }
}

/// Enqueues `k` over a `dims`-D range, counts the launch and records it in the profile as `label`
/// (formatted only when profiling). Every launcher below goes through here. No wait.
template <typename Label>
void enqueue_range(Runtime& rt, compute::kernel& k, cl_uint dims, const size_t* global, const size_t* local,
                   Label&& label) {
  Profile* profile = rt.profile();
  cl_event event = nullptr;
  const cl_int status = clEnqueueNDRangeKernel(rt.queue(), k.get(), dims, nullptr, global, local, 0, nullptr,
                                               profile ? &event : nullptr);
  ++rt.counters().kernel_launches;
  if (event) profile->record(event, label(), "kernel");
  if (status != CL_SUCCESS) {
    std::string range = fmt::format("global {}", global[0]), group = fmt::format("local {}", local[0]);
    for (cl_uint d = 1; d < dims; ++d)
      range += fmt::format("x{}", global[d]), group += fmt::format("x{}", local[d]);
    throw OpenCLError(status, "clEnqueueNDRangeKernel",
                      fmt::format("{} ({}, {}) on {}", k.name(), range, group, rt.info().name));
  }
}

/// Enqueues `k` for n elements, each work-item doing `per_item` of them: ⌈n / per_item⌉ work-items
/// (padded to the work-group size; kernels bound-check). No wait.
inline void launch_1d(Runtime& rt, compute::kernel& k, size_t n, size_t local = 64, size_t per_item = 1) {
  if (n == 0) return;
  local =
      std::max<size_t>(1, std::min({local, rt.info().max_work_group_size, kernel_work_group_size(rt, k)}));
  const size_t global = round_up((n + per_item - 1) / per_item, local);
  enqueue_range(rt, k, 1, &global, &local, [&] { return fmt::format("{} n={}", k.name(), n); });
}

/// Enqueues `k` for nx × ny elements, each work-item doing `per_item` consecutive columns: ⌈nx /
/// per_item⌉ × ny work-items (x padded to the work-group width `local_x`, groups one row high;
/// kernels bound-check x), so a kernel indexes rows and columns without dividing. No wait.
inline void launch_2d(Runtime& rt, compute::kernel& k, size_t nx, size_t ny, size_t per_item = 1,
                      size_t local_x = 64) {
  if (nx == 0 || ny == 0) return;
  const size_t items = (nx + per_item - 1) / per_item;
  local_x = std::max<size_t>(1, std::min({local_x, round_up(items, 8), rt.info().max_work_group_size,
                                          kernel_work_group_size(rt, k)}));
  const size_t global[2] = {round_up(items, local_x), ny}, local[2] = {local_x, 1};
  enqueue_range(rt, k, 2, global, local, [&] { return fmt::format("{} {}x{}", k.name(), ny, nx); });
}

/// Enqueues `k` over nx × ny work-items in work-groups of about 256: the whole (padded) row width
/// (or an equal part of a wider one) by as many rows as fit, so short rows (an image row of 24 pixels) still
/// make large groups — a CPU device pays per work-group. Kernels bound-check both x and y. No wait.
inline void launch_row_blocks(Runtime& rt, compute::kernel& k, size_t nx, size_t ny) {
  if (nx == 0 || ny == 0) return;
  const size_t most =
      std::max<size_t>(1, std::min(rt.info().max_work_group_size, kernel_work_group_size(rt, k)));
  // A row wider than 256 is split into equal parts (288 → 2 × 144, not 256 + a mostly idle 256).
  const size_t parts = (nx + 255) / 256;
  const size_t local_x = std::min({round_up((nx + parts - 1) / parts, 8), size_t(256), most});
  const size_t local_y = std::max<size_t>(1, std::min(size_t(256), most) / local_x);
  const size_t global[2] = {round_up(nx, local_x), round_up(ny, local_y)}, local[2] = {local_x, local_y};
  enqueue_range(rt, k, 2, global, local, [&] { return fmt::format("{} {}x{}", k.name(), ny, nx); });
}

/// Enqueues `k` over nx × ny × nz work-items: planes of nx × ny (an image's columns × rows) in
/// work-groups of about 256 (x as launch_row_blocks, y in equal parts of the plane's height), one
/// plane deep, so a kernel's per-plane index arithmetic depends on z alone. Kernels bound-check x
/// and y. No wait.
inline void launch_planes(Runtime& rt, compute::kernel& k, size_t nx, size_t ny, size_t nz) {
  if (nx == 0 || ny == 0 || nz == 0) return;
  const size_t most =
      std::max<size_t>(1, std::min(rt.info().max_work_group_size, kernel_work_group_size(rt, k)));
  const size_t parts_x = (nx + 255) / 256;
  const size_t local_x = std::min({round_up((nx + parts_x - 1) / parts_x, 8), size_t(256), most});
  const size_t rows_fit = std::max<size_t>(1, std::min(size_t(256), most) / local_x);
  const size_t parts_y = (ny + rows_fit - 1) / rows_fit, local_y = (ny + parts_y - 1) / parts_y;
  const size_t global[3] = {round_up(nx, local_x), round_up(ny, local_y), nz},
               local[3] = {local_x, local_y, 1};
  enqueue_range(rt, k, 3, global, local, [&] { return fmt::format("{} {}x{}x{}", k.name(), nz, ny, nx); });
}

/// Enqueues `k` over a 2-D range of work-groups `local` = {x, y}: `groups_x` × 1 groups, for data
/// of `rows` × `cols` (its name in a profile). No wait.
inline void launch_groups_2d(Runtime& rt, compute::kernel& k, size_t groups_x, const size_t (&local)[2],
                             size_t rows, size_t cols) {
  if (groups_x == 0) return;
  const size_t global[2] = {groups_x * local[0], local[1]};
  enqueue_range(rt, k, 2, global, local, [&] { return fmt::format("{} {}x{}", k.name(), rows, cols); });
}

}  // namespace anycl::detail
