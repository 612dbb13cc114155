// The training loop. Host work per step is enqueueing only; the host waits at progress
// updates and epoch ends, where it reads the device-side metric slots.
#include "anycl/train/trainer.hpp"

#include <fmt/format.h>

#include <chrono>

#include "anycl/error.hpp"
#include "anycl/train/batch_order.hpp"

namespace anycl {
namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }
}  // namespace

Trainer::Trainer(Sequential& model, Optimizer& optimizer, TrainOptions options)
    : model_(model),
      optimizer_(optimizer),
      options_(options),
      rt_(model.runtime()),
      gather_(rt_),
      loss_(rt_),
      evaluator_(model, options.batch) {
  if (options_.batch == 0 || options_.batch > model.max_batch())
    throw ValidationError(fmt::format("batch {} must be in [1, {}] (the size the model was built for)",
                                      options_.batch, model.max_batch()));
  x_ = Tensor(rt_, {options_.batch, model.input_features()});
  dlogits_ = Tensor(rt_, {options_.batch, model.output_features()});
  labels_ = compute::buffer(rt_.context(), options_.batch * sizeof(cl_int));
}

EvalStats Trainer::evaluate(const DeviceDataset& data) { return evaluator_.evaluate(data); }

void Trainer::train_step(const DeviceDataset& data, const compute::buffer& order, size_t first, size_t rows,
                         size_t slot) {
  const RuntimeCounters before = rt_.counters();
  Tensor x = x_.rows(0, rows), dlogits = dlogits_.rows(0, rows);
  gather_.run(data.images(), data.labels(), order, first, x, labels_);
  StepContext ctx;
  ctx.training = true;
  ctx.seed = options_.seed;
  ctx.step = uint32_t(steps_done_);
  const Tensor logits = model_.forward(x, ctx);
  loss_.run(logits, {&labels_, 0}, &dlogits, 1.0f / float(rows), metrics_, slot);
  model_.backward(dlogits, ctx);
  optimizer_.step(model_.parameters(), model_.gradients());
  ++steps_done_;
  const RuntimeCounters& after = rt_.counters();
  step_counters_.kernel_launches += after.kernel_launches - before.kernel_launches;
  step_counters_.gemm_calls += after.gemm_calls - before.gemm_calls;
  step_counters_.host_waits += after.host_waits - before.host_waits;
}

std::vector<EpochStats> Trainer::fit(const DeviceDataset& train, const DeviceDataset* eval,
                                     const std::string& eval_name) {
  if (train.features() != model_.input_features())
    throw ValidationError(fmt::format("the model takes {} input features but the data has {}",
                                      model_.input_features(), train.features()));
  if (train.num_classes() > model_.output_features())
    throw ValidationError(fmt::format("the data has {} classes but the model has {} outputs",
                                      train.num_classes(), model_.output_features()));
  const size_t steps = ceil_div(train.count(), options_.batch);
  if (metrics_.get() == nullptr || metrics_.size() < steps * 2 * sizeof(float))
    metrics_ = compute::buffer(rt_.context(), steps * 2 * sizeof(float));
  if (order_.get() == nullptr || order_.size() < train.count() * sizeof(cl_uint))
    order_ = compute::buffer(rt_.context(), train.count() * sizeof(cl_uint));
  std::vector<EpochStats> history;
  for (size_t epoch = 1; epoch <= options_.epochs; ++epoch) {
    const auto start = Clock::now();
    auto last_progress = start;
    // The previous epoch ended with a blocking read, so the last upload from host_order_ is done.
    host_order_ = epoch_order(train.count(), options_.seed, uint32_t(epoch - 1));
    detail::check_cl(
        clEnqueueWriteBuffer(rt_.queue().get(), order_.get(), CL_FALSE, 0,
                             host_order_.size() * sizeof(cl_uint), host_order_.data(), 0, nullptr, nullptr),
        "clEnqueueWriteBuffer", "epoch order");
    for (size_t s = 0; s < steps; ++s) {
      const size_t first = s * options_.batch, rows = std::min(options_.batch, train.count() - first);
      train_step(train, order_, first, rows, s);
      if (on_progress && options_.progress_interval_s > 0 &&
          since(last_progress) >= options_.progress_interval_s && s + 1 < steps) {
        const auto [loss, correct] = read_metric_sums(rt_, metrics_, s + 1);
        const size_t samples = first + rows;
        on_progress({epoch, options_.epochs, s + 1, steps, samples, since(start), loss / double(samples),
                     correct / double(samples)});
        last_progress = Clock::now();
      }
    }
    const auto [loss, correct] = read_metric_sums(rt_, metrics_, steps);
    EpochStats stats;
    stats.epoch = epoch;
    stats.steps = steps;
    stats.train_loss = loss / double(train.count());
    stats.train_accuracy = correct / double(train.count());
    stats.samples_per_second = double(train.count()) / since(start);
    if (on_progress)
      on_progress({epoch, options_.epochs, steps, steps, train.count(), since(start), stats.train_loss,
                   stats.train_accuracy});
    if (eval) {
      stats.has_eval = true;
      stats.eval_name = eval_name;
      stats.eval = evaluate(*eval);
    }
    stats.seconds = since(start);
    history.push_back(stats);
    if (on_epoch_end) on_epoch_end(stats);
  }
  return history;
}

}  // namespace anycl
