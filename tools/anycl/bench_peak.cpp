// `anycl bench gemm`'s "% of peak": the device's FP32 multiply-add rate, measured (bench_peak.hpp).
#include "bench_peak.hpp"

#include "anycl/opencl.hpp"  // first: the OpenCL target before Boost.Compute includes CL/cl.h

#include <fmt/format.h>
#include <algorithm>
#include <boost/compute/buffer.hpp>
#include <boost/compute/context.hpp>
#include <boost/compute/kernel.hpp>
#include <boost/compute/program.hpp>
#include <cmath>
#include <vector>

#include "anycl/error.hpp"
#include "bench_common.hpp"

namespace anycl::cli {

namespace compute = boost::compute;

// 12 chains x = x·m + c of VW-wide vectors per work-item, seeded from `seeds` so that no lane is a
// copy of another (a compiler may narrow a vector whose lanes it knows equal), and shifted by the
// work-item's id, so that no work-item's chains are another's (Intel's CPU runtime, which vectorizes
// across work-items, computed chains it found alike across them once: 4.4 TFLOP/s on two cores). Each chain
// depends only on itself: the rate is the multiply-add units', not their latency's. x * m + c, not mad():
// OpenCL C contracts it to an FMA where the device has one, and mad() may trade accuracy for speed, which the
// check against the host could not bound.
constexpr const char* kMadChainsKernel = R"CL(
#if VW == 1
typedef float vec;
#elif VW == 2
typedef float2 vec;
#elif VW == 4
typedef float4 vec;
#elif VW == 8
typedef float8 vec;
#else
typedef float16 vec;
#endif
__kernel void mad_chains(__global const vec* seeds, const float m, const float c, const uint iterations,
                         __global vec* out) {
  const vec mv = (vec)(m), cv = (vec)(c), shift = (vec)((float)(get_global_id(0) % 64) * 0.001f);
  vec x0 = seeds[0] + shift, x1 = seeds[1] + shift, x2 = seeds[2] + shift, x3 = seeds[3] + shift;
  vec x4 = seeds[4] + shift, x5 = seeds[5] + shift, x6 = seeds[6] + shift, x7 = seeds[7] + shift;
  vec x8 = seeds[8] + shift, x9 = seeds[9] + shift, x10 = seeds[10] + shift, x11 = seeds[11] + shift;
  for (uint i = 0; i < iterations; ++i) {
    x0 = x0 * mv + cv;
    x1 = x1 * mv + cv;
    x2 = x2 * mv + cv;
    x3 = x3 * mv + cv;
    x4 = x4 * mv + cv;
    x5 = x5 * mv + cv;
    x6 = x6 * mv + cv;
    x7 = x7 * mv + cv;
    x8 = x8 * mv + cv;
    x9 = x9 * mv + cv;
    x10 = x10 * mv + cv;
    x11 = x11 * mv + cv;
  }
  out[get_global_id(0)] = ((x0 + x1) + (x2 + x3)) + ((x4 + x5) + (x6 + x7)) + ((x8 + x9) + (x10 + x11));
}
)CL";

namespace {

// x ← x·m + c converges to c / (1 − m) = 1: values stay normal however long a chain runs.
constexpr float kMultiplier = 0.75f, kAddend = 0.25f;

// What work-item `item` writes after `iterations`, lane by lane, by the host's arithmetic (the sum in
// the kernel's order). The device may round x·m + c once (FMA) or twice; the check allows for either.
std::vector<float> host_sums(const std::vector<float>& seeds, size_t width, size_t item,
                             uint64_t iterations) {
  std::vector<float> chain(seeds);
  const float shift = float(item % 64) * 0.001f;
  for (float& x : chain) x += shift;
  for (uint64_t i = 0; i < iterations; ++i)
    for (float& x : chain) x = x * kMultiplier + kAddend;
  std::vector<float> sums(width);
  for (size_t lane = 0; lane < width; ++lane) {
    auto at = [&](size_t j) { return chain[j * width + lane]; };
    sums[lane] = ((at(0) + at(1)) + (at(2) + at(3))) + ((at(4) + at(5)) + (at(6) + at(7))) +
                 ((at(8) + at(9)) + (at(10) + at(11)));
  }
  return sums;
}

// One width's program, its buffers and the run of `work_items` work-items.
class MadChains {
 public:
  MadChains(Runtime& rt, size_t width, size_t work_items)
      : rt_(rt),
        width_(width),
        global_(work_items),
        local_(std::min<size_t>({64, rt.info().max_work_group_size, work_items})),
        context_(rt.context()),  // retains the runtime's context for as long as it lives
        seeds_(random_floats(kPeakChains * width, unsigned(100 + width))),
        seed_buffer_(context_, seeds_.size() * sizeof(float), CL_MEM_READ_ONLY),
        out_(context_, work_items * width * sizeof(float)) {
    if (width != 1 && width != 2 && width != 4 && width != 8 && width != 16)
      throw Error(fmt::format("bench gemm (peak): vector width {} is not 1, 2, 4, 8 or 16", width));
    if (global_ % local_ != 0)
      throw Error(fmt::format("bench gemm (peak): {} work-items are not a multiple of {}", global_, local_));
    compute::program program = compute::program::create_with_source(kMadChainsKernel, context_);
    program.build(fmt::format("-DVW={}", width));
    kernel_ = compute::kernel(program, "mad_chains");
    check(clEnqueueWriteBuffer(rt.queue(), seed_buffer_.get(), CL_TRUE, 0, seeds_.size() * sizeof(float),
                               seeds_.data(), 0, nullptr, nullptr),
          "clEnqueueWriteBuffer");
    const float m = kMultiplier, c = kAddend;
    kernel_.set_arg(0, seed_buffer_);
    kernel_.set_arg(1, sizeof(float), &m);
    kernel_.set_arg(2, sizeof(float), &c);
    kernel_.set_arg(4, out_);
  }

  /// Enqueues one run of `iterations` multiply-adds a chain (does not wait).
  void run(cl_uint iterations) {
    kernel_.set_arg(3, sizeof(cl_uint), &iterations);
    check(clEnqueueNDRangeKernel(rt_.queue(), kernel_.get(), 1, nullptr, &global_, &local_, 0, nullptr,
                                 nullptr),
          "clEnqueueNDRangeKernel");
  }

  /// One run of a few iterations (the chains still far from 1, so that each seed shows), every lane of
  /// every work-item against the host's.
  void check_results() {
    const cl_uint iterations = 6;
    run(iterations);
    std::vector<float> got(global_ * width_);
    check(clEnqueueReadBuffer(rt_.queue(), out_.get(), CL_TRUE, 0, got.size() * sizeof(float), got.data(), 0,
                              nullptr, nullptr),
          "clEnqueueReadBuffer");
    for (size_t item = 0; item < global_; ++item) {
      const std::vector<float> want = host_sums(seeds_, width_, item, iterations);
      for (size_t lane = 0; lane < width_; ++lane) {
        const float g = got[item * width_ + lane], w = want[lane];
        if (!(std::fabs(g - w) <= 1e-5f * (1.f + std::fabs(w))))
          throw Error(
              fmt::format("the multiply-add peak kernel (float{}) on {} computed {} where the host computes "
                          "{} (work-item {}, lane {}): the device's arithmetic is wrong, so no peak is "
                          "reported; check the driver (`anycl doctor`)",
                          width_, rt_.info().name, g, w, item, lane));
      }
    }
  }

  size_t work_items() const { return global_; }

 private:
  static void check(cl_int status, const char* call) { detail::check_cl(status, call, "bench gemm (peak)"); }

  Runtime& rt_;
  size_t width_, global_, local_;
  compute::context context_;
  std::vector<float> seeds_;
  compute::buffer seed_buffer_, out_;
  compute::kernel kernel_;
};

// A GPU needs many work-items in flight to hide its latencies; a CPU runs a work-group's items in turn.
size_t peak_work_items(const DeviceInfo& info) {
  const size_t local = std::min<size_t>(64, info.max_work_group_size);
  return size_t(std::max<uint32_t>(info.compute_units, 1)) * (info.type == DeviceType::gpu ? 32 : 4) * local;
}

}  // namespace

void check_peak_chains(Runtime& rt, size_t width, size_t work_items) {
  MadChains(rt, width, work_items).check_results();
}

MeasuredPeak measure_peak(Runtime& rt, int repeats) {
  static_assert(kPeakChains == 12, "the kernel's chains are written out");
  MeasuredPeak best;
  for (const size_t width : {size_t(1), size_t(2), size_t(4), size_t(8), size_t(16)}) {
    MadChains chains(rt, width, peak_work_items(rt.info()));
    chains.check_results();
    // Calibrate: iterations for ≥ 20 ms a run, then the median of `repeats` runs.
    const auto t0 = Clock::now();
    chains.run(1024);
    rt.finish();
    const double once = std::max(since(t0), 1e-6);
    const auto iterations = cl_uint(std::clamp(1024.0 * 0.02 / once, 1024.0, double(1u << 26)));
    const double seconds = seconds_per_call(
        repeats, [&] { chains.run(iterations); }, [&] { rt.finish(); });
    const double gflops =
        2.0 * double(kPeakChains * width) * double(iterations) * double(chains.work_items()) / seconds * 1e-9;
    best.widths += fmt::format("{}{}: {:.1f}", best.widths.empty() ? "" : ", ", width, gflops);
    if (gflops > best.gflops)
      best.gflops = gflops, best.vector_width = width, best.iterations = iterations,
      best.work_items = chains.work_items();
  }
  return best;
}

}  // namespace anycl::cli
