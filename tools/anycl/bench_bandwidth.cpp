// `anycl bench bandwidth`: on-device copy and triad GB/s and host↔device GB/s, pageable and pinned,
// through Boost.Compute over the runtime's raw OpenCL handles, as an application would.
#include "bench_bandwidth.hpp"

#include "anycl/opencl.hpp"  // first: the OpenCL target before Boost.Compute includes CL/cl.h

#include <boost/compute/buffer.hpp>
#include <boost/compute/context.hpp>
#include <boost/compute/kernel.hpp>
#include <boost/compute/program.hpp>

#include "anycl/error.hpp"

namespace anycl::cli {

namespace compute = boost::compute;

// The triad a = b + s·c, one element a work-item.
constexpr const char* kTriadKernel = R"CL(
__kernel void triad(__global float* a, __global const float* b, __global const float* c, const float s,
                    const uint n) {
  const size_t i = get_global_id(0);  // 32-bit, Intel's runtime gathered and scattered: 13 GB/s
  if (i < n) a[i] = b[i] + s * c[i];
}
)CL";

Table bench_bandwidth(Runtime& rt, const BenchSettings& s) {
  Table t;
  t.name = "bandwidth";
  t.title = "Memory bandwidth, GB/s (10⁹ bytes/s)";
  t.columns = {"what", "MiB", "GB/s"};
  const size_t n = std::min<size_t>(size_t(16) << 20, rt.info().max_alloc_bytes / sizeof(float) / 2);
  const size_t bytes = n * sizeof(float);
  cl_context ctx = rt.context();
  cl_command_queue q = rt.queue();
  const compute::context context(ctx);  // retains the runtime's context for as long as it lives
  compute::buffer a(context, bytes), b(context, bytes), c(context, bytes);
  compute::program program = compute::program::create_with_source(kTriadKernel, context);
  program.build();
  compute::kernel triad(program, "triad");
  const float scale = 3.f;
  const cl_uint count = cl_uint(n);
  triad.set_arg(0, a);
  triad.set_arg(1, b);
  triad.set_arg(2, c);
  triad.set_arg(3, sizeof(float), &scale);
  triad.set_arg(4, sizeof(cl_uint), &count);
  std::vector<float> host(n, 1.f);
  auto check = [](cl_int st, const char* call) { detail::check_cl(st, call, "bench bandwidth"); };
  check(clEnqueueWriteBuffer(q, b.get(), CL_TRUE, 0, bytes, host.data(), 0, nullptr, nullptr),
        "clEnqueueWriteBuffer");
  check(clEnqueueWriteBuffer(q, c.get(), CL_TRUE, 0, bytes, host.data(), 0, nullptr, nullptr),
        "clEnqueueWriteBuffer");
  auto finish = [&] { rt.finish(); };
  auto row = [&](const std::string& what, double moved, double secs) {
    t.rows.push_back(
        {Cell::str(what), Cell::num(double(bytes) / (1 << 20), 0), Cell::num(moved / secs * 1e-9, 2)});
  };
  row("device copy (read+write)", 2.0 * bytes,
      seconds_per_call(
          s.repeats,
          [&] {
            check(clEnqueueCopyBuffer(q, b.get(), a.get(), 0, 0, bytes, 0, nullptr, nullptr),
                  "clEnqueueCopyBuffer");
          },
          finish));
  const size_t local = std::min<size_t>(256, rt.info().max_work_group_size),
               global = (n + local - 1) / local * local;
  row("device triad a=b+s·c", 3.0 * bytes,
      seconds_per_call(
          s.repeats,
          [&] {
            check(clEnqueueNDRangeKernel(q, triad.get(), 1, nullptr, &global, &local, 0, nullptr, nullptr),
                  "clEnqueueNDRangeKernel");
          },
          finish));
  row("host→device pageable", double(bytes),
      seconds_per_call(
          s.repeats,
          [&] {
            check(clEnqueueWriteBuffer(q, a.get(), CL_TRUE, 0, bytes, host.data(), 0, nullptr, nullptr),
                  "clEnqueueWriteBuffer");
          },
          [] {}));
  row("device→host pageable", double(bytes),
      seconds_per_call(
          s.repeats,
          [&] {
            check(clEnqueueReadBuffer(q, a.get(), CL_TRUE, 0, bytes, host.data(), 0, nullptr, nullptr),
                  "clEnqueueReadBuffer");
          },
          [] {}));
  // Pinned: host memory the driver allocated (CL_MEM_ALLOC_HOST_PTR), mapped once.
  cl_int st = CL_SUCCESS;
  cl_mem pinned = clCreateBuffer(ctx, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, bytes, nullptr, &st);
  check(st, "clCreateBuffer(CL_MEM_ALLOC_HOST_PTR)");
  compute::buffer pinned_buffer(pinned, false);
  void* p =
      clEnqueueMapBuffer(q, pinned, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, nullptr, nullptr, &st);
  check(st, "clEnqueueMapBuffer");
  row("host→device pinned", double(bytes),
      seconds_per_call(
          s.repeats,
          [&] {
            check(clEnqueueWriteBuffer(q, a.get(), CL_TRUE, 0, bytes, p, 0, nullptr, nullptr),
                  "clEnqueueWriteBuffer");
          },
          [] {}));
  row("device→host pinned", double(bytes),
      seconds_per_call(
          s.repeats,
          [&] {
            check(clEnqueueReadBuffer(q, a.get(), CL_TRUE, 0, bytes, p, 0, nullptr, nullptr),
                  "clEnqueueReadBuffer");
          },
          [] {}));
  check(clEnqueueUnmapMemObject(q, pinned, p, 0, nullptr, nullptr), "clEnqueueUnmapMemObject");
  rt.finish();
  t.notes.push_back("bound by memory bandwidth; on a CPU device host↔device is a memcpy within the same RAM");
  return t;
}

}  // namespace anycl::cli
