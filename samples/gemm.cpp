// Sample: the classic GPU walk-through — allocate on the device, copy in, multiply with
// CLBlast, copy out, synchronise — and check the result against a plain host loop.
// Usage: gemm [M N K]   (device from ANYCL_DEVICE; default 512 512 512)
#include <fmt/format.h>
#include <anycl/blas/blas.hpp>
#include <anycl/error.hpp>
#include <anycl/runtime.hpp>
#include <anycl/tensor.hpp>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <random>

int main(int argc, char** argv) try {
  const size_t m = argc > 3 ? std::strtoul(argv[1], nullptr, 10) : 512;
  const size_t n = argc > 3 ? std::strtoul(argv[2], nullptr, 10) : 512;
  const size_t k = argc > 3 ? std::strtoul(argv[3], nullptr, 10) : 512;
  if (m == 0 || n == 0 || k == 0 || m > 16384 || n > 16384 || k > 16384) {
    fmt::print(stderr, "usage: gemm [M N K] with each in 1..16384\n");
    return 2;
  }

  // 1. Start the runtime: picks the device and compiles anycl's kernels (cached on disk).
  anycl::Runtime rt;
  fmt::print("device: {} ({})\n", rt.info().name, rt.info().platform_name);

  // 2. Host data: small integers, so every product and sum is exact in float.
  std::mt19937 rng(42);
  std::uniform_int_distribution<int> small(-4, 4);
  std::vector<float> a(m * k), b(k * n);
  for (auto& v : a) v = float(small(rng));
  for (auto& v : b) v = float(small(rng));

  // 3. Allocate device tensors and copy the inputs in.
  anycl::Tensor da = anycl::Tensor::from_host(rt, {m, k}, a);
  anycl::Tensor db = anycl::Tensor::from_host(rt, {k, n}, b);
  anycl::Tensor dc(rt, {m, n});

  // 4. Multiply once to compile CLBlast's kernel, then time a few runs (enqueue, then wait).
  anycl::matmul(da, anycl::Trans::no, db, anycl::Trans::no, dc);
  rt.finish();
  const int repeats = 5;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < repeats; ++i) anycl::matmul(da, anycl::Trans::no, db, anycl::Trans::no, dc);
  rt.finish();  // GEMMs are asynchronous: synchronise before reading the clock
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / repeats;

  // 5. Copy the result out and compare with a host loop.
  const std::vector<float> c = dc.download();
  double max_error = 0;
  for (size_t i = 0; i < m; ++i)
    for (size_t j = 0; j < n; ++j) {
      double ref = 0;
      for (size_t p = 0; p < k; ++p) ref += double(a[i * k + p]) * b[p * n + j];
      max_error = std::max(max_error, std::abs(ref - c[i * n + j]));
    }
  fmt::print("C({}x{}) = A({}x{}) · B({}x{}): max error {}, {:.3f} ms, {:.2f} GFLOP/s\n", m, n, m, k, k, n,
             max_error, seconds * 1e3, 2.0 * m * n * k / seconds * 1e-9);
  return max_error == 0 ? 0 : 1;
} catch (const anycl::Error& e) {
  fmt::print(stderr, "gemm: {}\n", e.what());
  return 1;
}
