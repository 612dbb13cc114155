// The benchmarks' shared helpers (bench_common.hpp).
#include "bench_common.hpp"

#include <random>

namespace anycl::cli {

std::vector<float> random_floats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

}  // namespace anycl::cli
