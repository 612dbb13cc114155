// Host reference of batch normalisation over (batch, channels, plane) row-major floats (plane 1
// after Dense, H·W after Conv2D): the batch's mean and biased variance, the moving statistics'
// update, normalisation, and the training-mode backward through the batch statistics, with the
// layer's activation after the normalisation (its textbook derivative from z). Sums in double.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

#include "reference/activation.hpp"

namespace anycl::reference {

struct BatchNormStats {
  std::vector<float> mean, var;  // per channel; var is the biased (population) variance
};

inline size_t bn_at(size_t n, size_t c, size_t s, size_t channels, size_t plane) {
  return (n * channels + c) * plane + s;
}

inline BatchNormStats batchnorm_stats(const std::vector<float>& x, size_t batch, size_t channels,
                                      size_t plane) {
  BatchNormStats st{std::vector<float>(channels), std::vector<float>(channels)};
  const double m = double(batch * plane);
  for (size_t c = 0; c < channels; ++c) {
    double sum = 0, sq = 0;
    for (size_t n = 0; n < batch; ++n)
      for (size_t s = 0; s < plane; ++s) sum += x[bn_at(n, c, s, channels, plane)];
    const double mean = sum / m;
    for (size_t n = 0; n < batch; ++n)
      for (size_t s = 0; s < plane; ++s) {
        const double d = x[bn_at(n, c, s, channels, plane)] - mean;
        sq += d * d;
      }
    st.mean[c] = float(mean);
    st.var[c] = float(sq / m);
  }
  return st;
}

/// moving (mean at [0, C), variance at [C, 2C)) = moving·momentum + batch·(1 − momentum).
inline void batchnorm_update_moving(std::vector<float>& moving, const BatchNormStats& st, float momentum) {
  const size_t channels = st.mean.size();
  for (size_t c = 0; c < channels; ++c) {
    moving[c] = moving[c] * momentum + st.mean[c] * (1.0f - momentum);
    moving[channels + c] = moving[channels + c] * momentum + st.var[c] * (1.0f - momentum);
  }
}

/// y = act((x − mean)·γ/sqrt(var + ε) + β); params = γ then β.
inline std::vector<float> batchnorm_forward(const float* params, const std::vector<float>& x, size_t batch,
                                            size_t channels, size_t plane, const std::vector<float>& mean,
                                            const std::vector<float>& var, float epsilon,
                                            Activation act = Activation::linear) {
  std::vector<float> y(x.size());
  for (size_t n = 0; n < batch; ++n)
    for (size_t c = 0; c < channels; ++c) {
      const double scale = params[c] / std::sqrt(double(var[c]) + epsilon);
      for (size_t s = 0; s < plane; ++s) {
        const size_t i = bn_at(n, c, s, channels, plane);
        y[i] = float(activate((x[i] - double(mean[c])) * scale + params[channels + c], act));
      }
    }
  return y;
}

/// The training-mode backward: grads ← (dγ, dβ), returns dx; dy is first taken through act'(z).
inline std::vector<float> batchnorm_backward(const float* params, const std::vector<float>& x,
                                             std::vector<float> dy, size_t batch, size_t channels,
                                             size_t plane, float epsilon, float* grads,
                                             Activation act = Activation::linear) {
  const BatchNormStats st = batchnorm_stats(x, batch, channels, plane);
  if (act != Activation::linear)
    for (size_t c = 0; c < channels; ++c) {
      const double scale = params[c] / std::sqrt(double(st.var[c]) + epsilon);
      for (size_t n = 0; n < batch; ++n)
        for (size_t s = 0; s < plane; ++s) {
          const size_t i = bn_at(n, c, s, channels, plane);
          dy[i] = float(dy[i] *
                        activate_derivative((x[i] - double(st.mean[c])) * scale + params[channels + c], act));
        }
    }
  std::vector<float> dx(x.size());
  const double m = double(batch * plane);
  for (size_t c = 0; c < channels; ++c) {
    const double inv = 1.0 / std::sqrt(double(st.var[c]) + epsilon);
    double s_dy = 0, s_dyx = 0;
    for (size_t n = 0; n < batch; ++n)
      for (size_t s = 0; s < plane; ++s) {
        const size_t i = bn_at(n, c, s, channels, plane);
        s_dy += dy[i];
        s_dyx += dy[i] * (x[i] - double(st.mean[c])) * inv;
      }
    grads[c] = float(s_dyx);
    grads[channels + c] = float(s_dy);
    for (size_t n = 0; n < batch; ++n)
      for (size_t s = 0; s < plane; ++s) {
        const size_t i = bn_at(n, c, s, channels, plane);
        const double xhat = (x[i] - double(st.mean[c])) * inv;
        dx[i] = float(params[c] * inv / m * (m * dy[i] - s_dy - xhat * s_dyx));
      }
  }
  return dx;
}

}  // namespace anycl::reference
