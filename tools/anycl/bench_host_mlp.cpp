// The host step: three SGEMMs forward and five backward (as on the device), fused elementwise
// loops around them, and RMSprop over the flat parameter vector.
#include "bench_host_mlp.hpp"

#include <algorithm>
#include <cmath>

#include "bench_host_blas.hpp"

namespace anycl::cli {
namespace {
uint32_t xorshift(uint32_t& s) {
  s ^= s << 13;
  s ^= s >> 17;
  s ^= s << 5;
  return s;
}
}  // namespace

HostMlp::HostMlp(std::vector<size_t> sizes, size_t batch, float dropout, float lr, float rho, float epsilon,
                 uint64_t seed)
    : sizes_(std::move(sizes)),
      batch_(batch),
      keep_scale_(1.f / (1.f - dropout)),
      drop_threshold_(dropout * 4294967296.f),
      lr_(lr),
      rho_(rho),
      epsilon_(epsilon),
      rng_(uint32_t(seed * 2654435761u) | 1u) {
  const size_t layers = sizes_.size() - 1;
  size_t n = 0;
  for (size_t l = 0; l < layers; ++l) {
    w_off_.push_back(n);
    n += sizes_[l] * sizes_[l + 1];
    b_off_.push_back(n);
    n += sizes_[l + 1];
  }
  params_.assign(n, 0.f);
  grads_.assign(n, 0.f);
  mean_square_.assign(n, 0.f);
  for (size_t l = 0; l < layers; ++l) {  // Glorot-uniform weights, zero biases
    const float limit = std::sqrt(6.f / float(sizes_[l] + sizes_[l + 1]));
    for (size_t i = 0; i < sizes_[l] * sizes_[l + 1]; ++i)
      params_[w_off_[l] + i] = (float(xorshift(rng_)) / 4294967296.f * 2.f - 1.f) * limit;
  }
  for (size_t l = 0; l <= layers; ++l) act_.emplace_back(batch_ * sizes_[l]);
  for (size_t l = 1; l < layers; ++l) {
    pre_mask_.emplace_back(batch_ * sizes_[l]);
    mask_.emplace_back(batch_ * sizes_[l]);
  }
  logits_.resize(batch_ * sizes_.back());
  delta_.resize(batch_ * *std::max_element(sizes_.begin(), sizes_.end()));
  delta_prev_.resize(delta_.size());
}

float HostMlp::step(const float* x, const uint8_t* labels, size_t rows) {
  const size_t layers = sizes_.size() - 1, classes = sizes_.back();
  std::copy(x, x + rows * sizes_[0], act_[0].begin());
  // forward — h:(rows,in) W:(in,out) → (rows,out)
  for (size_t l = 0; l < layers; ++l) {
    const size_t in = sizes_[l], out = sizes_[l + 1];
    const bool last = l + 1 == layers;
    float* y = last ? logits_.data() : pre_mask_[l].data();
    host_sgemm(false, false, rows, out, in, 1.f, act_[l].data(), in, &params_[w_off_[l]], out, 0.f, y, out);
    const float* b = &params_[b_off_[l]];
    if (last) {
      for (size_t r = 0; r < rows; ++r)
        for (size_t j = 0; j < out; ++j) y[r * out + j] += b[j];
      break;
    }
    float* m = mask_[l].data();
    float* next = act_[l + 1].data();
    for (size_t r = 0; r < rows; ++r)
      for (size_t j = 0; j < out; ++j) {
        const size_t i = r * out + j;
        y[i] = std::max(y[i] + b[j], 0.f);
        m[i] = float(xorshift(rng_)) < drop_threshold_ ? 0.f : keep_scale_;
        next[i] = y[i] * m[i];
      }
  }
  // softmax cross-entropy and its gradient: delta = (softmax − onehot)/rows
  double loss = 0;
  for (size_t r = 0; r < rows; ++r) {
    const float* z = &logits_[r * classes];
    const float mx = *std::max_element(z, z + classes);
    float sum = 0;
    for (size_t j = 0; j < classes; ++j) sum += std::exp(z[j] - mx);
    loss += std::log(sum) - (z[labels[r]] - mx);
    for (size_t j = 0; j < classes; ++j)
      delta_[r * classes + j] = (std::exp(z[j] - mx) / sum - (j == labels[r] ? 1.f : 0.f)) / float(rows);
  }
  // backward — dW = hᵀ·δ (TN), db = Σ δ, δ_prev = δ·Wᵀ (NT) then through dropout and ReLU
  for (size_t l = layers; l-- > 0;) {
    const size_t in = sizes_[l], out = sizes_[l + 1];
    host_sgemm(true, false, in, out, rows, 1.f, act_[l].data(), in, delta_.data(), out, 0.f,
               &grads_[w_off_[l]], out);
    float* db = &grads_[b_off_[l]];
    std::fill(db, db + out, 0.f);
    for (size_t r = 0; r < rows; ++r)
      for (size_t j = 0; j < out; ++j) db[j] += delta_[r * out + j];
    if (l == 0) break;
    host_sgemm(false, true, rows, in, out, 1.f, delta_.data(), out, &params_[w_off_[l]], out, 0.f,
               delta_prev_.data(), in);
    const float* y = pre_mask_[l - 1].data();
    const float* m = mask_[l - 1].data();
    for (size_t i = 0; i < rows * in; ++i) delta_prev_[i] *= y[i] > 0.f ? m[i] : 0.f;
    std::swap(delta_, delta_prev_);
  }
  // RMSprop, as Keras: a = ρa + (1−ρ)g², w −= lr·g/√(a+ε)
  float* w = params_.data();
  const float* g = grads_.data();
  float* a = mean_square_.data();
  const size_t n = params_.size();
  for (size_t i = 0; i < n; ++i) {
    a[i] = rho_ * a[i] + (1.f - rho_) * g[i] * g[i];
    w[i] -= lr_ * g[i] / std::sqrt(a[i] + epsilon_);
  }
  return float(loss / double(rows));
}

}  // namespace anycl::cli
