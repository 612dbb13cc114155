// Timing GEMMs at a model's shapes (see the header).
#include "blas/tuning/gemm_timing.hpp"

#include <algorithm>
#include <chrono>

#include "anycl/blas/blas.hpp"
#include "anycl/tensor.hpp"
#include "blas/gemm_plan.hpp"

namespace anycl::detail {
namespace {

constexpr int kCallsPerTiming = 2;  // calls between two waits, so a small GEMM's time is not the wait's

size_t largest_operand(const std::vector<GemmShape>& shapes) {
  size_t biggest = 1;
  for (const auto& s : shapes) biggest = std::max({biggest, s.m * s.k, s.k * s.n, s.m * s.n});
  return biggest;
}

}  // namespace

ShapeBuffers::ShapeBuffers(Runtime& rt, const std::vector<GemmShape>& shapes)
    : a(rt, largest_operand(shapes) * sizeof(float), "tuning GEMM input A"),
      b(rt, largest_operand(shapes) * sizeof(float), "tuning GEMM input B"),
      c(rt, largest_operand(shapes) * sizeof(float), "tuning GEMM output C") {}

std::vector<double> time_each_shape(Runtime& rt, const std::vector<GemmShape>& shapes, ShapeBuffers& buf,
                                    int repeats) {
  using Clock = std::chrono::steady_clock;
  auto run = [&](const GemmShape& s) {
    gemm(rt, s.trans_a ? Trans::yes : Trans::no, s.trans_b ? Trans::yes : Trans::no, s.m, s.n, s.k, 1.f,
         buf.a, 0, s.trans_a ? s.m : s.k, buf.b, 0, s.trans_b ? s.k : s.n, 0.f, buf.c, 0, s.n);
  };
  for (const auto& s : shapes) run(s);  // compiles every kernel the shapes need
  rt.finish();
  std::vector<double> out;
  for (const auto& s : shapes) {
    std::vector<double> t;
    for (int r = 0; r < std::max(1, repeats); ++r) {
      const auto t0 = Clock::now();
      for (int i = 0; i < kCallsPerTiming; ++i) run(s);
      rt.finish();
      t.push_back(std::chrono::duration<double>(Clock::now() - t0).count() / kCallsPerTiming);
    }
    std::sort(t.begin(), t.end());
    out.push_back(t[t.size() / 2]);
  }
  return out;
}

double dense_transposes_seconds(Runtime& rt, const GemmShape& shape, int repeats) {
  if (!shape.transposes_a) return 0;
  using Clock = std::chrono::steady_clock;
  Tensor a(rt, {shape.m, shape.k}), at(rt, {shape.k, shape.m});
  Tensor w(rt, {shape.trans_b ? shape.n : 1, shape.k}), wt(rt, {shape.k, shape.trans_b ? shape.n : 1});
  auto run = [&] {
    transpose(a, at);
    if (shape.trans_b) transpose(w, wt);
  };
  run();  // compiles
  rt.finish();
  std::vector<double> t;
  for (int r = 0; r < std::max(1, repeats); ++r) {
    const auto t0 = Clock::now();
    for (int i = 0; i < kCallsPerTiming; ++i) run();
    rt.finish();
    t.push_back(std::chrono::duration<double>(Clock::now() - t0).count() / kCallsPerTiming);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

namespace {

// Median seconds of anycl's transpose of an rows×cols matrix (a dense dx's W, before its GEMM NN).
double transpose_seconds(Runtime& rt, size_t rows, size_t cols, int repeats) {
  using Clock = std::chrono::steady_clock;
  Tensor w(rt, {rows, cols}), wt(rt, {cols, rows});
  transpose(w, wt);  // compiles
  rt.finish();
  std::vector<double> t;
  for (int r = 0; r < std::max(1, repeats); ++r) {
    const auto t0 = Clock::now();
    for (int i = 0; i < kCallsPerTiming; ++i) transpose(w, wt);
    rt.finish();
    t.push_back(std::chrono::duration<double>(Clock::now() - t0).count() / kCallsPerTiming);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace

double pass_seconds_as_trained(Runtime& rt, const std::vector<GemmShape>& shapes, ShapeBuffers& buf,
                               int repeats) {
  std::vector<GemmShape> run = shapes;
  std::vector<double> extra(shapes.size(), 0.0);  // anycl's transposes before a shape
  for (size_t i = 0; i < shapes.size(); ++i) {
    const GemmShape& s = shapes[i];
    if (!s.transposes_a) continue;                // not a Dense product: as it is
    if (reads_a_transposed(rt, s.m, s.n, s.k)) {  // xᵀ (dzᵀ and Wᵀ for dx), then TN
      run[i].trans_a = true, run[i].trans_b = false;
      extra[i] = dense_transposes_seconds(rt, s, repeats);
    } else if (!s.trans_a && s.trans_b && dense_dx(rt, s.m, s.n, s.k) == DenseDxForm::transpose_w_gemm_nn) {
      run[i].trans_b = false;  // Wᵀ, then NN
      extra[i] = transpose_seconds(rt, s.n, s.k, repeats);
    }
  }
  const std::vector<double> each = time_each_shape(rt, run, buf, repeats);
  double sum = 0;
  for (size_t i = 0; i < each.size(); ++i) sum += (each[i] + extra[i]) * double(shapes[i].count);
  return sum;
}

double time_shapes(Runtime& rt, const std::vector<GemmShape>& shapes, ShapeBuffers& buf, int repeats) {
  const std::vector<double> each = time_each_shape(rt, shapes, buf, repeats);
  double sum = 0;
  for (size_t i = 0; i < each.size(); ++i) sum += each[i] * double(shapes[i].count);
  return sum;
}

}  // namespace anycl::detail
