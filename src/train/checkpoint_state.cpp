// The model part of a checkpoint: captured with a finiteness guard, checked against the run
// that resumes it, restored.
#include "train/checkpoint_state.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "anycl/error.hpp"

namespace anycl::detail {
namespace {
bool finite(const std::vector<float>& values) {
  return std::all_of(values.begin(), values.end(), [](float f) { return std::isfinite(f); });
}
}  // namespace

void capture_model_state(Checkpoint& c, Sequential& model, Optimizer& optimizer, const TrainOptions& options,
                         size_t num_classes) {
  c.model.spec = model.spec();
  c.model.num_classes = num_classes ? num_classes : model.output_features();
  c.model.parameters = model.download_weights();
  c.optimizer_state.clear();
  for (Tensor* t : optimizer.state()) c.optimizer_state.push_back(t->download());
  bool ok = finite(c.model.parameters);
  for (const auto& s : c.optimizer_state) ok = ok && finite(s);
  if (!ok)
    throw NumericalError(fmt::format(
        "training diverged by epoch {}, step {} (global step {}): the weights or optimizer state became "
        "NaN or infinite — lower the learning rate (now {:g})",
        c.epoch + 1, c.step_in_epoch, c.steps_done, optimizer.learning_rate()));
  c.optimizer = optimizer.name();
  c.learning_rate = optimizer.learning_rate();
  c.optimizer_iterations = optimizer.iterations();
  c.seed = options.seed;
  c.batch = options.batch;
}

void check_resumable(const Checkpoint& c, const Sequential& model, Optimizer& optimizer,
                     const TrainOptions& options) {
  auto differs = [](const char* what, const auto& ours, const auto& theirs) {
    return ValidationError(fmt::format(
        "the checkpoint was written with {} {} but this run has {} — resume with the same settings", what,
        theirs, ours));
  };
  const Sequential saved(c.model.spec);
  if (saved.summary() != model.summary() || c.model.parameters.size() != model.weight_count())
    throw ValidationError(
        fmt::format("the checkpoint's model differs from this one:\n{}this run's model:\n{}— resume with the "
                    "same architecture",
                    saved.summary(), model.summary()));
  if (c.optimizer != optimizer.name()) throw differs("optimizer", optimizer.name(), c.optimizer);
  if (c.batch != options.batch) throw differs("batch", options.batch, c.batch);
  if (c.seed != options.seed) throw differs("seed", options.seed, c.seed);
  const std::vector<Tensor*> state = optimizer.state();
  if (c.optimizer_state.size() != state.size())
    throw differs("optimizer state tensors", state.size(), c.optimizer_state.size());
  for (size_t i = 0; i < state.size(); ++i)
    if (c.optimizer_state[i].size() != state[i]->size())
      throw differs("optimizer state size", state[i]->size(), c.optimizer_state[i].size());
}

void restore_model_state(const Checkpoint& c, Sequential& model, Optimizer& optimizer) {
  model.upload_weights(c.model.parameters);
  const std::vector<Tensor*> state = optimizer.state();
  for (size_t i = 0; i < state.size(); ++i) state[i]->upload(c.optimizer_state[i]);
  optimizer.set_iterations(c.optimizer_iterations);
}

}  // namespace anycl::detail
