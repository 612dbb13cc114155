// `anycl bench bandwidth`: on-device copy and triad GB/s and host↔device GB/s, pageable and pinned,
// through Boost.Compute over the runtime's raw OpenCL handles, as an application would.
#include "bench_bandwidth.hpp"

#include "anycl/opencl.hpp"  // first: the OpenCL target before Boost.Compute includes CL/cl.h

#include <boost/compute/buffer.hpp>
#include <boost/compute/context.hpp>
#include <boost/compute/kernel.hpp>
#include <boost/compute/program.hpp>

#include "anycl/error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <vector>

namespace anycl::cli {

namespace compute = boost::compute;

namespace {

// The triad a = b + s·c, one element a work-item.
constexpr const char* kTriadKernel = R"CL(
__kernel void triad(__global float* a, __global const float* b, __global const float* c, const float s,
                    const uint n) {
  const size_t i = get_global_id(0);  // 32-bit, Intel's runtime gathered and scattered: 13 GB/s
  if (i < n) a[i] = b[i] + s * c[i];
}
)CL";
constexpr float kTriadScale = 3.f;

// Operands whose every element differs from its neighbours' and whose triad is exact in float
// (quarters below 1024 plus three times integers below 2048), so that a fused multiply-add and a
// separate multiply and add give the same bits and the host's arithmetic is the reference.
float triad_b(size_t i) { return float(i % 4093) * 0.25f; }
float triad_c(size_t i) { return float((i * 7) % 2039) - 1000.f; }

// The triad kernel over a, b and c of n floats, built for the runtime's device.
class TriadKernel {
 public:
  TriadKernel(Runtime& rt, const compute::buffer& a, const compute::buffer& b, const compute::buffer& c,
              size_t n)
      : rt_(rt),
        program_(compute::program::create_with_source(kTriadKernel, compute::context(rt.context()))),
        local_(std::min<size_t>(256, rt.info().max_work_group_size)),
        global_((n + local_ - 1) / local_ * local_) {
    if (n == 0 || n > UINT32_MAX)
      throw Error(fmt::format("bench bandwidth: {} elements are not between 1 and 2³²−1", n));
    program_.build();
    kernel_ = compute::kernel(program_, "triad");
    const cl_uint count = cl_uint(n);
    kernel_.set_arg(0, a);
    kernel_.set_arg(1, b);
    kernel_.set_arg(2, c);
    kernel_.set_arg(3, sizeof(float), &kTriadScale);
    kernel_.set_arg(4, sizeof(cl_uint), &count);
  }
  void enqueue() {
    detail::check_cl(clEnqueueNDRangeKernel(rt_.queue(), kernel_.get(), 1, nullptr, &global_, &local_, 0,
                                            nullptr, nullptr),
                     "clEnqueueNDRangeKernel", "bench bandwidth");
  }

 private:
  Runtime& rt_;
  compute::program program_;
  compute::kernel kernel_;
  size_t local_, global_;
};

void write(Runtime& rt, const compute::buffer& to, const std::vector<float>& from) {
  detail::check_cl(clEnqueueWriteBuffer(rt.queue(), to.get(), CL_TRUE, 0, from.size() * sizeof(float),
                                        from.data(), 0, nullptr, nullptr),
                   "clEnqueueWriteBuffer", "bench bandwidth");
}
std::vector<float> read(Runtime& rt, const compute::buffer& from, size_t n) {
  std::vector<float> out(n);
  detail::check_cl(clEnqueueReadBuffer(rt.queue(), from.get(), CL_TRUE, 0, n * sizeof(float), out.data(), 0,
                                       nullptr, nullptr),
                   "clEnqueueReadBuffer", "bench bandwidth");
  return out;
}

// Fills b and c with triad_b and triad_c, runs the triad once and compares every element of a with
// the host's b + s·c; then copies b into a and compares a with b. Throws Error at the first difference.
void check_triad_and_copy(Runtime& rt, TriadKernel& triad, const compute::buffer& a, const compute::buffer& b,
                          const compute::buffer& c, size_t n) {
  std::vector<float> hb(n), hc(n);
  for (size_t i = 0; i < n; ++i) {
    hb[i] = triad_b(i);
    hc[i] = triad_c(i);
  }
  write(rt, b, hb);
  write(rt, c, hc);
  triad.enqueue();
  const std::vector<float> ha = read(rt, a, n);
  for (size_t i = 0; i < n; ++i)
    if (ha[i] != hb[i] + kTriadScale * hc[i])
      throw Error(
          fmt::format("bench bandwidth: the triad kernel computed a[{}] = {} where the host computes "
                      "{} + {}·{} = {}; no figure of this device would mean anything",
                      i, ha[i], hb[i], kTriadScale, hc[i], hb[i] + kTriadScale * hc[i]));
  detail::check_cl(
      clEnqueueCopyBuffer(rt.queue(), b.get(), a.get(), 0, 0, n * sizeof(float), 0, nullptr, nullptr),
      "clEnqueueCopyBuffer", "bench bandwidth");
  const std::vector<float> copied = read(rt, a, n);
  const auto differs = std::mismatch(copied.begin(), copied.end(), hb.begin());
  if (differs.first != copied.end())
    throw Error(fmt::format("bench bandwidth: the device's copy gave a[{}] = {} where b holds {}",
                            differs.first - copied.begin(), *differs.first, *differs.second));
}

}  // namespace

void check_triad(Runtime& rt, size_t n) {
  const compute::context context(rt.context());
  const size_t bytes = std::max<size_t>(n, 1) * sizeof(float);
  compute::buffer a(context, bytes), b(context, bytes), c(context, bytes);
  TriadKernel triad(rt, a, b, c, n);
  check_triad_and_copy(rt, triad, a, b, c, n);
}

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
  TriadKernel triad(rt, a, b, c, n);
  check_triad_and_copy(rt, triad, a, b, c, n);  // before any figure: a wrong result would make it meaningless
  std::vector<float> host(n, 1.f);
  auto check = [](cl_int st, const char* call) { detail::check_cl(st, call, "bench bandwidth"); };
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
  row("device triad a=b+s·c", 3.0 * bytes,
      seconds_per_call(
          s.repeats, [&] { triad.enqueue(); }, finish));
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
  t.notes.push_back(
      "bound by memory bandwidth; on a CPU device host↔device is a memcpy within the same RAM; the triad's "
      "and the copy's results were checked element by element against the host's before timing");
  return t;
}

}  // namespace anycl::cli
