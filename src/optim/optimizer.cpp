// The optimizer implementations (each a few lines around one kernel of optimizer.cl) and the
// factory that validates hyper-parameters.
#include "anycl/optim/optimizer.hpp"

#include <cmath>

#include "anycl/error.hpp"
#include "ops/kernel_call.hpp"

namespace anycl {
namespace {

using detail::u32;

// Parameters per work-item, PER_ITEM in cl_kernels/optimizer.cl: 16 on a CPU runtime, 4 on a GPU
// (RuntimeImpl::lane_elementwise).
size_t per_item(Runtime& rt) { return detail::RuntimeImpl::of(rt).lane_elementwise ? 4 : 16; }

compute::kernel update_kernel(Runtime& rt, const char* name, size_t per_item) {
  return detail::kernel_with_options(rt, "optimizer", name, per_item == 16 ? "" : "-DPER_ITEM=4");
}

Tensor zeroed(Runtime& rt, size_t n) {
  Tensor t(rt, {n});
  t.fill(0.f);
  return t;
}

void check_sizes(const Tensor& params, const Tensor& grads, size_t n) {
  if (params.size() != n || grads.size() != n || params.offset() != 0 || grads.offset() != 0)
    throw ValidationError(fmt::format("optimizer built for {} parameters got params {} and grads {}", n,
                                      params.shape_string(), grads.shape_string()));
}

class Sgd final : public Optimizer {
 public:
  Sgd(Runtime& rt, size_t n, float lr, float momentum, bool nesterov, std::string name)
      : rt_(rt),
        n_(n),
        lr_(lr),
        momentum_(momentum),
        nesterov_(nesterov),
        name_(std::move(name)),
        velocity_(zeroed(rt, momentum > 0 ? n : 1)),
        per_item_(per_item(rt)),
        kernel_(update_kernel(rt, "sgd_update", per_item_)) {}
  void step(Tensor& params, const Tensor& grads) override {
    check_sizes(params, grads, n_);
    detail::set_args(kernel_, params.mem(), grads.mem(), velocity_.mem(), u32(n_, "parameters"),
                     cl_float(lr_), cl_float(momentum_), cl_int(nesterov_));
    detail::launch_1d(rt_, kernel_, n_, 64, per_item_);
    ++iterations_;
  }
  std::string name() const override { return name_; }
  float learning_rate() const override { return lr_; }
  void set_learning_rate(float lr) override { lr_ = lr; }
  std::vector<Tensor*> state() override { return {&velocity_}; }

 private:
  Runtime& rt_;
  size_t n_;
  float lr_, momentum_;
  bool nesterov_;
  std::string name_;
  Tensor velocity_;
  size_t per_item_;  // the kernel's PER_ITEM
  compute::kernel kernel_;
};

class RmsProp final : public Optimizer {
 public:
  RmsProp(Runtime& rt, size_t n, const OptimizerConfig& c, float lr)
      : rt_(rt),
        n_(n),
        lr_(lr),
        rho_(c.rho),
        epsilon_(c.epsilon),
        mean_square_(zeroed(rt, n)),
        per_item_(per_item(rt)),
        kernel_(update_kernel(rt, "rmsprop_update", per_item_)) {}
  void step(Tensor& params, const Tensor& grads) override {
    check_sizes(params, grads, n_);
    detail::set_args(kernel_, params.mem(), grads.mem(), mean_square_.mem(), u32(n_, "parameters"),
                     cl_float(lr_), cl_float(rho_), cl_float(epsilon_));
    detail::launch_1d(rt_, kernel_, n_, 64, per_item_);
    ++iterations_;
  }
  std::string name() const override { return "rmsprop"; }
  float learning_rate() const override { return lr_; }
  void set_learning_rate(float lr) override { lr_ = lr; }
  std::vector<Tensor*> state() override { return {&mean_square_}; }

 private:
  Runtime& rt_;
  size_t n_;
  float lr_, rho_, epsilon_;
  Tensor mean_square_;
  size_t per_item_;  // the kernel's PER_ITEM
  compute::kernel kernel_;
};

class Adam final : public Optimizer {
 public:
  Adam(Runtime& rt, size_t n, const OptimizerConfig& c, float lr, bool decoupled_decay)
      : rt_(rt),
        n_(n),
        lr_(lr),
        beta1_(c.beta1),
        beta2_(c.beta2),
        epsilon_(c.epsilon),
        weight_decay_(decoupled_decay ? c.weight_decay : 0.f),
        decay_(lr * weight_decay_),
        adamw_(decoupled_decay),
        m_(zeroed(rt, n)),
        v_(zeroed(rt, n)),
        per_item_(per_item(rt)),
        kernel_(update_kernel(rt, "adam_update", per_item_)) {}
  void step(Tensor& params, const Tensor& grads) override {
    check_sizes(params, grads, n_);
    const double t = double(iterations_ + 1);
    const float lr_t = float(lr_ * std::sqrt(1.0 - std::pow(beta2_, t)) / (1.0 - std::pow(beta1_, t)));
    detail::set_args(kernel_, params.mem(), grads.mem(), m_.mem(), v_.mem(), u32(n_, "parameters"),
                     cl_float(lr_t), cl_float(beta1_), cl_float(beta2_), cl_float(epsilon_),
                     cl_float(decay_));
    detail::launch_1d(rt_, kernel_, n_, 64, per_item_);
    ++iterations_;
  }
  std::string name() const override { return adamw_ ? "adamw" : "adam"; }
  float learning_rate() const override { return lr_; }
  // Keras' AdamW decays by the scheduled rate times weight_decay.
  void set_learning_rate(float lr) override { lr_ = lr, decay_ = lr * weight_decay_; }
  std::vector<Tensor*> state() override { return {&m_, &v_}; }

 private:
  Runtime& rt_;
  size_t n_;
  float lr_, beta1_, beta2_, epsilon_, weight_decay_, decay_;
  bool adamw_;
  Tensor m_, v_;
  size_t per_item_;  // the kernel's PER_ITEM
  compute::kernel kernel_;
};

void check_positive(const char* what, float value, float max) {
  if (!(std::isfinite(value) && value > 0.f && value <= max))
    throw ValidationError(fmt::format("{} must be a finite number in (0, {}], got {}", what, max, value));
}

}  // namespace

const char* optimizer_names() noexcept { return "sgd, momentum, nesterov, rmsprop, adam, adamw"; }

float check_optimizer_config(const OptimizerConfig& c) {
  const bool sgd_family = c.name == "sgd" || c.name == "momentum" || c.name == "nesterov";
  const bool known = sgd_family || c.name == "rmsprop" || c.name == "adam" || c.name == "adamw";
  if (!known)
    throw ValidationError(fmt::format("unknown optimizer '{}' — choose {}", c.name, optimizer_names()));
  const float lr = c.lr == 0.f ? (sgd_family ? 0.01f : 0.001f) : c.lr;
  check_positive("learning rate", lr, 10.f);
  if (!(c.momentum >= 0.f && c.momentum < 1.f)) throw ValidationError("momentum must be in [0, 1)");
  if (!(c.rho >= 0.f && c.rho < 1.f)) throw ValidationError("rho must be in [0, 1)");
  if (!(c.beta1 >= 0.f && c.beta1 < 1.f && c.beta2 >= 0.f && c.beta2 < 1.f))
    throw ValidationError("beta1 and beta2 must be in [0, 1)");
  check_positive("epsilon", c.epsilon, 1.f);
  return lr;
}

std::unique_ptr<Optimizer> make_optimizer(Runtime& rt, size_t n, const OptimizerConfig& c) {
  const float lr = check_optimizer_config(c);
  if (c.name == "sgd") return std::make_unique<Sgd>(rt, n, lr, 0.f, false, "sgd");
  if (c.name == "momentum") return std::make_unique<Sgd>(rt, n, lr, c.momentum, false, "momentum");
  if (c.name == "nesterov") return std::make_unique<Sgd>(rt, n, lr, c.momentum, true, "nesterov");
  if (c.name == "rmsprop") return std::make_unique<RmsProp>(rt, n, c, lr);
  if (c.name == "adam") return std::make_unique<Adam>(rt, n, c, lr, false);
  if (c.name == "adamw") return std::make_unique<Adam>(rt, n, c, lr, true);
  throw ValidationError(fmt::format("unknown optimizer '{}' — choose {}", c.name, optimizer_names()));
}

}  // namespace anycl
