// Optimizers: objects that hold their state on the device and update the flat parameter
// buffer from the flat gradient buffer in one launch per step (cl_kernels/optimizer.cl).
//
//   auto opt = anycl::make_optimizer(rt, model.parameter_count(), {"rmsprop"});
//   opt->step(model.parameters(), model.gradients());
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "anycl/tensor.hpp"

namespace anycl {

/// Hyper-parameters; defaults are Keras'. lr = 0 means the optimizer's own default
/// (0.01 for the SGD family, 0.001 for RMSprop and Adam/AdamW).
struct OptimizerConfig {
  std::string name = "rmsprop";  // sgd, momentum, nesterov, rmsprop, adam, adamw
  float lr = 0.f;
  float momentum = 0.9f;               // momentum, nesterov
  float rho = 0.9f;                    // rmsprop
  float epsilon = 1e-7f;               // rmsprop, adam
  float beta1 = 0.9f, beta2 = 0.999f;  // adam
  float weight_decay = 0.004f;         // adamw (decoupled, as Keras' AdamW default)
};

class Optimizer {
 public:
  virtual ~Optimizer() = default;
  /// Applies one update to `params` from `grads` (same size). Enqueued, no wait.
  virtual void step(Tensor& params, const Tensor& grads) = 0;
  /// "rmsprop", ...
  virtual std::string name() const = 0;
  /// The learning rate in use.
  virtual float learning_rate() const = 0;
  /// Sets the learning rate of the following steps (a schedule's): a kernel argument, so no wait and
  /// no launch; Adam's bias-corrected rate and AdamW's decay follow it.
  virtual void set_learning_rate(float lr) = 0;
  /// Device tensors holding the optimizer's state (for checkpoints).
  virtual std::vector<Tensor*> state() = 0;
  /// Steps taken so far.
  uint64_t iterations() const noexcept { return iterations_; }
  /// Sets the step count (restoring a checkpoint: Adam's bias correction depends on it).
  void set_iterations(uint64_t iterations) noexcept { iterations_ = iterations; }

 protected:
  uint64_t iterations_ = 0;
};

/// The optimizer named in `config` for `parameter_count` parameters, state zeroed.
/// Throws ValidationError for an unknown name or a non-finite / non-positive learning rate.
std::unique_ptr<Optimizer> make_optimizer(Runtime& rt, size_t parameter_count, const OptimizerConfig& config);

/// ValidationError for an unknown name or an out-of-range setting; else the learning rate to use
/// (the optimizer's default when config.lr is 0).
float check_optimizer_config(const OptimizerConfig& config);

/// The names make_optimizer accepts, comma-separated.
const char* optimizer_names() noexcept;

}  // namespace anycl
