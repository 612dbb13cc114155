// An efficient host (CPU) training step of the reference MLP — 784-512-512-10, ReLU, dropout,
// softmax cross-entropy, RMSprop — with every GEMM in host CBLAS: the bench's baseline for
// "how much faster is the device", and a second, independent implementation of the step.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace anycl::cli {

class HostMlp {
 public:
  /// Layer sizes (e.g. {784, 512, 512, 10}), the batch, dropout rate and RMSprop hyper-parameters.
  HostMlp(std::vector<size_t> sizes, size_t batch, float dropout, float lr = 1e-3f, float rho = 0.9f,
          float epsilon = 1e-7f, uint64_t seed = 1);
  /// One training step on `rows` ≤ batch images: x:(rows, sizes[0]) floats, labels:(rows). Returns the
  /// batch's mean loss.
  float step(const float* x, const uint8_t* labels, size_t rows);
  size_t parameter_count() const { return params_.size(); }

 private:
  std::vector<size_t> sizes_;
  size_t batch_;
  float keep_scale_, drop_threshold_, lr_, rho_, epsilon_;
  uint32_t rng_;
  std::vector<float> params_, grads_, mean_square_;
  std::vector<size_t> w_off_, b_off_;    // per layer, into params_/grads_
  std::vector<std::vector<float>> act_;  // act_[l]: the input of layer l (after dropout), (batch, sizes[l])
  std::vector<std::vector<float>> pre_mask_;  // the ReLU output before dropout, per hidden layer
  std::vector<std::vector<float>> mask_;      // 0 or 1/(1−rate), per hidden layer
  std::vector<float> logits_, delta_, delta_prev_;
};

}  // namespace anycl::cli
