// Drives the snippet on separable data: four Gaussian blobs in 3-D (one per class), trained on
// 512 samples and scored on 256 held-out ones. Exit 0 when the accuracy is at least 0.9.
#include <anycl/error.hpp>

#include <cstdint>
#include <cstdio>
#include <random>
#include <vector>

std::vector<float> train_and_predict(const std::vector<float>& x, const std::vector<int32_t>& y, size_t d,
                                     size_t k, const std::vector<float>& new_x);
size_t boost_compute_and_anycl_together();

namespace {
void blobs(size_t n, size_t d, size_t k, unsigned seed, std::vector<float>& x, std::vector<int32_t>& y) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> noise(0.f, 0.5f);
  for (size_t i = 0; i < n; ++i) {
    const size_t c = i % k;
    for (size_t j = 0; j < d; ++j) x.push_back((j == c % d ? 3.f : 0.f) * (c < d ? 1.f : -1.f) + noise(rng));
    y.push_back(int32_t(c));
  }
}
}  // namespace

int main() {
  try {
    const size_t d = 3, k = 4;
    std::vector<float> x, new_x;
    std::vector<int32_t> y, new_y;
    blobs(512, d, k, 1, x, y);
    blobs(256, d, k, 2, new_x, new_y);
    const std::vector<float> p = train_and_predict(x, y, d, k, new_x);
    if (p.size() != new_y.size() * k) {
      std::fprintf(stderr, "predict returned %zu values for %zu rows of %zu classes\n", p.size(),
                   new_y.size(), k);
      return 2;
    }
    size_t right = 0;
    for (size_t i = 0; i < new_y.size(); ++i) {
      size_t best = 0;
      for (size_t c = 1; c < k; ++c)
        if (p[i * k + c] > p[i * k + best]) best = c;
      right += best == size_t(new_y[i]);
    }
    const double accuracy = double(right) / double(new_y.size());
    std::printf("held-out accuracy %.4f (%zu samples)%s\n", accuracy, new_y.size(),
                boost_compute_and_anycl_together() ? "" : "?");
    return accuracy >= 0.9 ? 0 : 3;
  } catch (const anycl::Error& e) {
    std::fprintf(stderr, "embed_snippet: %s\n", e.what());
    return 1;
  }
}
