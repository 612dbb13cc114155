// Plain-loop optimizer updates following Keras (cl_kernels/optimizer.cl), in float and in the
// kernels' operation order, plus a small stateful wrapper resolving OptimizerConfig like
// make_optimizer does (default learning rates, Adam's bias-corrected step size).
#pragma once

#include <anycl/optim/optimizer.hpp>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace anycl::reference {

/// SGD; with momentum: v = m·v − lr·g, w += v (Nesterov: w += m·v − lr·g).  w,g,v:(n)
inline void sgd_update(float* w, const float* g, float* v, size_t n, float lr, float momentum,
                       bool nesterov) {
  for (size_t i = 0; i < n; ++i) {
    if (momentum == 0.f) {
      w[i] -= lr * g[i];
      continue;
    }
    v[i] = momentum * v[i] - lr * g[i];
    w[i] += nesterov ? momentum * v[i] - lr * g[i] : v[i];
  }
}

/// RMSprop as Keras: a = ρ·a + (1−ρ)·g², w −= lr·g / √(a + ε).  w,g,a:(n)
inline void rmsprop_update(float* w, const float* g, float* a, size_t n, float lr, float rho, float epsilon) {
  for (size_t i = 0; i < n; ++i) {
    a[i] = rho * a[i] + (1.0f - rho) * g[i] * g[i];
    w[i] -= lr * g[i] / std::sqrt(a[i] + epsilon);
  }
}

/// Adam step size at step t (1-based): lr·√(1−β2^t)/(1−β1^t), computed in double like the host.
inline float adam_lr_t(float lr, float beta1, float beta2, uint64_t t) {
  return float(lr * std::sqrt(1.0 - std::pow(beta2, double(t))) / (1.0 - std::pow(beta1, double(t))));
}

/// Adam/AdamW: m,v moments; w = w·(1−decay) − lr_t·m/(√v + ε), decay = lr·weight_decay (AdamW).
inline void adam_update(float* w, const float* g, float* m, float* v, size_t n, float lr_t, float beta1,
                        float beta2, float epsilon, float decay) {
  for (size_t i = 0; i < n; ++i) {
    m[i] = beta1 * m[i] + (1.0f - beta1) * g[i];
    v[i] = beta2 * v[i] + (1.0f - beta2) * g[i] * g[i];
    w[i] = w[i] * (1.0f - decay) - lr_t * m[i] / (std::sqrt(v[i]) + epsilon);
  }
}

/// The optimizer named in `config` over n parameters, state zeroed (as make_optimizer builds it).
class Optimizer {
 public:
  Optimizer(const OptimizerConfig& config, size_t n) : c_(config), s1_(n, 0.f), s2_(n, 0.f) {
    const bool sgd_family = c_.name == "sgd" || c_.name == "momentum" || c_.name == "nesterov";
    if (c_.lr == 0.f) c_.lr = sgd_family ? 0.01f : 0.001f;
  }
  float learning_rate() const { return c_.lr; }
  /// One update of w from g (both n floats).
  void step(std::vector<float>& w, const std::vector<float>& g) {
    const size_t n = w.size();
    ++t_;
    if (c_.name == "sgd")
      sgd_update(w.data(), g.data(), s1_.data(), n, c_.lr, 0.f, false);
    else if (c_.name == "momentum")
      sgd_update(w.data(), g.data(), s1_.data(), n, c_.lr, c_.momentum, false);
    else if (c_.name == "nesterov")
      sgd_update(w.data(), g.data(), s1_.data(), n, c_.lr, c_.momentum, true);
    else if (c_.name == "rmsprop")
      rmsprop_update(w.data(), g.data(), s1_.data(), n, c_.lr, c_.rho, c_.epsilon);
    else if (c_.name == "adam" || c_.name == "adamw")
      adam_update(w.data(), g.data(), s1_.data(), s2_.data(), n, adam_lr_t(c_.lr, c_.beta1, c_.beta2, t_),
                  c_.beta1, c_.beta2, c_.epsilon, c_.name == "adamw" ? c_.lr * c_.weight_decay : 0.f);
    else
      throw std::invalid_argument("reference optimizer: unknown name " + c_.name);
  }
  /// Velocity / mean square / first moment, and Adam's second moment.
  const std::vector<float>& state1() const { return s1_; }
  const std::vector<float>& state2() const { return s2_; }

 private:
  OptimizerConfig c_;
  std::vector<float> s1_, s2_;
  uint64_t t_ = 0;
};

}  // namespace anycl::reference
