// What the benchmarks of `anycl bench` share: their settings (from cmd_bench.cpp's flags) and the
// median-of-repeats timer.
#pragma once

#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include "anycl/nn/conv2d.hpp"
#include "bench_table.hpp"

namespace anycl::cli {

using Clock = std::chrono::steady_clock;
inline double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

/// What the flags of `anycl bench` set for the benchmark that runs (cmd_bench.cpp).
struct BenchSettings {
  int repeats = 5;
  std::vector<size_t> sizes;
  double peak_gflops = 0;
  std::string data_dir;
  size_t limit = 12800;
  std::string blas_note;
  bool breakdown = false;          // mlp, cnn: profile the steps (--breakdown, --profile)
  std::string gemm_model = "mlp";  // --model: gemm: whose GEMM shapes (mlp, cnn); cnn: cnn or bncnn
  // cnn: the Conv2D algorithms trained (--conv-forward), the first also profiled and timed per layer
  std::vector<ConvForward> conv_forwards{ConvForward::automatic, ConvForward::convgemm};
  std::string profile_path;             // mlp: where the trace goes (--profile)
  std::vector<Table>* extra = nullptr;  // tables a bench adds after its own (the breakdown)
};

// Median seconds per call of `run`: one warm-up call, then enough calls per repeat for ≥ 20 ms.
template <typename Run, typename Sync>
double seconds_per_call(int repeats, Run&& run, Sync&& sync) {
  auto t0 = Clock::now();
  run();
  sync();
  t0 = Clock::now();
  run();
  sync();
  const double once = std::max(since(t0), 1e-7);
  const int calls = std::max(1, int(0.02 / once));
  std::vector<double> samples;
  for (int r = 0; r < repeats; ++r) {
    t0 = Clock::now();
    for (int i = 0; i < calls; ++i) run();
    sync();
    samples.push_back(since(t0) / calls);
  }
  return median(samples);
}

/// `n` floats uniform in [-1, 1), the same for the same `seed`.
std::vector<float> random_floats(size_t n, unsigned seed);

}  // namespace anycl::cli
