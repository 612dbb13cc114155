// The training loop. Host work per step is enqueueing only; the host waits at progress
// updates, checkpoints and epoch ends, where it reads the device-side metric slots (and checks
// that the loss is finite: the numerical guard costs no extra wait).
#include "anycl/train/trainer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "anycl/error.hpp"
#include "anycl/train/batch_order.hpp"
#include "anycl/train/checkpoint.hpp"
#include "train/checkpoint_state.hpp"

namespace anycl {
namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }
// (loss, correct) summed in double in slot order, as read_metric_sums does.
std::pair<double, double> sums(const std::vector<float>& values) {
  double loss = 0, correct = 0;
  for (size_t s = 0; s + 1 < values.size(); s += 2) loss += values[s], correct += values[s + 1];
  return {loss, correct};
}
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

namespace {

// Stores the steady-clock time at which the event completed; owns a reference to the slot, so a
// trainer destroyed before the device gets there leaves nothing dangling.
void CL_CALLBACK record_completion(cl_event, cl_int, void* user_data) {
  auto* slot = static_cast<std::shared_ptr<std::atomic<int64_t>>*>(user_data);
  (*slot)->store(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count());
  delete slot;
}

}  // namespace

std::optional<Clock::time_point> Trainer::first_step_finished() const {
  const int64_t ns = first_step_ns_->load();
  if (ns == 0) return std::nullopt;
  return Clock::time_point(std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(ns)));
}

void Trainer::note_first_step() {
  cl_event marker = nullptr;
  detail::check_cl(clEnqueueMarkerWithWaitList(rt_.queue().get(), 0, nullptr, &marker),
                   "clEnqueueMarkerWithWaitList", "first training step");
  auto* slot = new std::shared_ptr<std::atomic<int64_t>>(first_step_ns_);
  const cl_int status = clSetEventCallback(marker, CL_COMPLETE, record_completion, slot);
  if (status != CL_SUCCESS) delete slot;  // the time is a report, not a result: go on without it
  clReleaseEvent(marker);
}

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
  if (first_step_ns_->load() == 0 && !first_step_noted_) {
    first_step_noted_ = true;
    note_first_step();
  }
  const RuntimeCounters& after = rt_.counters();
  step_counters_.kernel_launches += after.kernel_launches - before.kernel_launches;
  step_counters_.gemm_calls += after.gemm_calls - before.gemm_calls;
  step_counters_.transposes += after.transposes - before.transposes;
  step_counters_.host_waits += after.host_waits - before.host_waits;
}

std::vector<float> Trainer::read_slots(size_t slots) {
  std::vector<float> values = read_metric_slots(rt_, metrics_, slots);
  for (size_t s = 0; s < slots; ++s)
    if (!std::isfinite(values[2 * s]))
      throw NumericalError(fmt::format(
          "training diverged at epoch {}, step {} (global step {}): the loss became {} — lower the "
          "learning rate (now {:g})",
          epoch_ + 1, s + 1, steps_done_ - step_ + s + 1, values[2 * s], optimizer_.learning_rate()));
  return values;
}

Checkpoint Trainer::checkpoint() {
  Checkpoint c;
  c.epoch_metrics = read_slots(step_);
  c.steps_done = steps_done_;
  c.epoch = epoch_;
  c.step_in_epoch = step_;
  detail::capture_model_state(c, model_, optimizer_, options_, num_classes_);
  c.train_count = train_count_ ? train_count_ : 1;
  c.history = history_;
  c.app = options_.checkpoint_app;
  return c;
}

void Trainer::save_checkpoint(const std::string& path) { write_checkpoint(path, checkpoint()); }

void Trainer::resume_from(const std::string& path) { resume_from(read_checkpoint(path)); }

void Trainer::resume_from(const Checkpoint& c) {
  detail::check_resumable(c, model_, optimizer_, options_);
  detail::restore_model_state(c, model_, optimizer_);
  steps_done_ = c.steps_done;
  epoch_ = c.epoch;
  step_ = c.step_in_epoch;
  train_count_ = c.train_count;
  num_classes_ = c.model.num_classes;
  restored_metrics_ = c.epoch_metrics;
  history_ = c.history;
}

void Trainer::write_checkpoint_if_asked() {
  if (!options_.checkpoint_path.empty()) save_checkpoint(options_.checkpoint_path);
}

std::vector<EpochStats> Trainer::fit(const DeviceDataset& train, const DeviceDataset* eval,
                                     const std::string& eval_name) {
  if (train.features() != model_.input_features())
    throw ValidationError(fmt::format("the model takes {} input features but the data has {}",
                                      model_.input_features(), train.features()));
  if (train.num_classes() > model_.output_features())
    throw ValidationError(fmt::format("the data has {} classes but the model has {} outputs",
                                      train.num_classes(), model_.output_features()));
  if (train_count_ != 0 && train_count_ != train.count())
    throw ValidationError(fmt::format(
        "the checkpoint was written for {} training samples per epoch but the data has {} — resume with the "
        "same data set, --limit and --validation-split",
        train_count_, train.count()));
  train_count_ = train.count();
  num_classes_ = train.num_classes();
  stopped_ = false;
  const size_t steps = ceil_div(train.count(), options_.batch);
  if (metrics_.get() == nullptr || metrics_.size() < steps * 2 * sizeof(float))
    metrics_ = compute::buffer(rt_.context(), steps * 2 * sizeof(float));
  if (order_.get() == nullptr || order_.size() < train.count() * sizeof(cl_uint))
    order_ = compute::buffer(rt_.context(), train.count() * sizeof(cl_uint));
  if (!restored_metrics_.empty()) {
    ++rt_.counters().host_waits;
    detail::check_cl(clEnqueueWriteBuffer(rt_.queue().get(), metrics_.get(), CL_TRUE, 0,
                                          restored_metrics_.size() * sizeof(float), restored_metrics_.data(),
                                          0, nullptr, nullptr),
                     "clEnqueueWriteBuffer", "restored epoch metrics");
    restored_metrics_.clear();
  }
  const uint64_t steps_at_start = steps_done_;
  auto stop_requested = [&] {
    return (options_.stop && options_.stop->load()) ||
           (options_.max_steps && steps_done_ - steps_at_start >= options_.max_steps);
  };
  while (epoch_ < options_.epochs) {
    const size_t epoch = epoch_ + 1;
    const auto start = Clock::now();
    auto last_progress = start;
    // The previous epoch ended with a blocking read, so the last upload from host_order_ is done.
    host_order_ = epoch_order(train.count(), options_.seed, uint32_t(epoch - 1));
    detail::check_cl(
        clEnqueueWriteBuffer(rt_.queue().get(), order_.get(), CL_FALSE, 0,
                             host_order_.size() * sizeof(cl_uint), host_order_.data(), 0, nullptr, nullptr),
        "clEnqueueWriteBuffer", "epoch order");
    const size_t first_step = step_;
    while (step_ < steps) {
      if (stop_requested()) {
        write_checkpoint_if_asked();
        stopped_ = true;
        return history_;
      }
      const size_t first = step_ * options_.batch, rows = std::min(options_.batch, train.count() - first);
      train_step(train, order_, first, rows, step_);
      ++step_;
      if (options_.checkpoint_every && steps_done_ % options_.checkpoint_every == 0 && step_ < steps)
        write_checkpoint_if_asked();
      if (on_progress && options_.progress_interval_s > 0 &&
          since(last_progress) >= options_.progress_interval_s && step_ < steps) {
        const auto [loss, correct] = sums(read_slots(step_));
        const size_t samples = first + rows;
        on_progress({epoch, options_.epochs, step_, steps, samples, since(start), loss / double(samples),
                     correct / double(samples)});
        last_progress = Clock::now();
      }
    }
    const auto [loss, correct] = sums(read_slots(steps));
    EpochStats stats;
    stats.epoch = epoch;
    stats.steps = steps;
    stats.train_loss = loss / double(train.count());
    stats.train_accuracy = correct / double(train.count());
    const size_t trained = std::min(train.count(), (steps - first_step) * options_.batch);
    stats.samples_per_second = double(trained) / since(start);
    if (on_progress)
      on_progress({epoch, options_.epochs, steps, steps, train.count(), since(start), stats.train_loss,
                   stats.train_accuracy});
    if (eval) {
      stats.has_eval = true;
      stats.eval_name = eval_name;
      stats.eval = evaluate(*eval);
    }
    stats.seconds = since(start);
    history_.push_back(stats);
    ++epoch_;
    step_ = 0;
    if (on_epoch_end) on_epoch_end(stats);
    write_checkpoint_if_asked();
  }
  return history_;
}

}  // namespace anycl
