// The data-parallel step: shards computed concurrently on every local device, gradients summed
// on the host in replica order (then across processes), the same update applied everywhere.
#include "anycl/dist/data_parallel.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "anycl/error.hpp"
#include "anycl/train/batch_order.hpp"

namespace anycl {
namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
}  // namespace

DataParallelTrainer::DataParallelTrainer(const std::vector<Runtime*>& runtimes, const ModelSpec& spec,
                                         const OptimizerConfig& optimizer, TrainOptions options,
                                         Collective* collective, std::vector<double> shares)
    : options_(options), collective_(collective ? collective : &single_process_) {
  if (runtimes.empty()) throw ValidationError("data-parallel training needs at least one device");
  // Every process holds the same number of local replicas; the world is processes × local
  // replicas, in rank-major order. Shares are given per local replica (the same on every
  // process) or per replica of the world (identical on every process, e.g. measure_speed_shares).
  const size_t world = size_t(collective_->size()) * runtimes.size();
  if (shares.empty()) shares.assign(runtimes.size(), 1.0);
  if (shares.size() != runtimes.size() && shares.size() != world)
    throw ValidationError(
        fmt::format("{} shares for {} devices ({} replicas in all)", shares.size(), runtimes.size(), world));
  for (double s : shares)
    if (!(std::isfinite(s) && s > 0)) throw ValidationError("device shares must be positive numbers");
  double total = 0;
  bounds_.push_back(0);
  for (size_t g = 0; g < world; ++g) bounds_.push_back(total += shares[g % shares.size()]);
  for (double& b : bounds_) b /= total;
  for (Runtime* rt : runtimes)
    replicas_.push_back(std::make_unique<Replica>(*rt, spec, optimizer, options.batch, options.seed));
}

std::pair<size_t, size_t> DataParallelTrainer::shard(size_t rows, size_t k) const {
  const size_t g = size_t(collective_->rank()) * replicas_.size() + k;
  auto edge = [&](size_t i) {
    return i + 1 == bounds_.size() ? rows : size_t(std::floor(bounds_[i] * double(rows)));
  };
  return {edge(g), edge(g + 1)};
}

void DataParallelTrainer::step(size_t first, size_t rows, size_t slot) {
  const uint32_t step = uint32_t(steps_done_);
  for (size_t k = 0; k < replicas_.size(); ++k) {
    const auto [lo, hi] = shard(rows, k);
    replicas_[k]->compute_gradients(first, lo, hi, rows, step, slot);
  }
  // Layer by layer as each one's gradients reach the host (last layer first): the sum runs in
  // replica order, then MPI's, so every run of the same set-up is identical; meanwhile the devices
  // go on with the earlier layers' backward. A stop vote rides on the first layer's sum, so every
  // process stops after the same step.
  const auto& ranges = replicas_[0]->gradient_ranges();
  sum_grads_.resize(replicas_[0]->model().parameter_count());
  for (size_t c = 0; c < ranges.size(); ++c) {
    const auto [offset, count] = ranges[c];
    const float* first_replica = replicas_[0]->wait_gradients(c);
    chunk_.assign(first_replica, first_replica + count);
    for (size_t k = 1; k < replicas_.size(); ++k) {
      const float* g = replicas_[k]->wait_gradients(c);
      for (size_t i = 0; i < count; ++i) chunk_[i] += g[i];
    }
    if (c == 0) chunk_.push_back(options_.stop && options_.stop->load() ? 1.f : 0.f);
    collective_->sum(chunk_);
    if (c == 0) {
      stop_agreed_ = chunk_.back() > 0.f;
      chunk_.pop_back();
    }
    std::copy(chunk_.begin(), chunk_.end(), sum_grads_.begin() + long(offset));
  }
  for (auto& r : replicas_) {
    r->write_gradients(sum_grads_);
    r->apply_update();
  }
  ++steps_done_;
}

std::vector<float> DataParallelTrainer::global_slots(size_t slots) {
  std::vector<float> total(2 * slots, 0.f);
  for (auto& r : replicas_) {
    const std::vector<float> local = r->metric_slots(slots);
    for (size_t i = 0; i < total.size(); ++i) total[i] += local[i];
  }
  collective_->sum(total);
  for (size_t s = 0; s < slots; ++s)
    if (!std::isfinite(total[2 * s]))
      throw NumericalError(fmt::format(
          "training diverged at epoch {}, step {} (global step {}): the loss became {} — lower the "
          "learning rate (now {:g})",
          epoch_ + 1, s + 1, steps_done_ - step_ + s + 1, total[2 * s],
          replicas_[0]->optimizer().learning_rate()));
  return total;
}

void DataParallelTrainer::write_checkpoint_if_asked() {
  if (!options_.checkpoint_path.empty()) save_checkpoint(options_.checkpoint_path);
}

std::vector<EpochStats> DataParallelTrainer::fit(const data::Dataset& train, const data::Dataset* eval,
                                                 const std::string& eval_name) {
  if (train.features() != replicas_[0]->model().input_features())
    throw ValidationError(fmt::format("the model takes {} input features but the data has {}",
                                      replicas_[0]->model().input_features(), train.features()));
  if (train_count_ != 0 && train_count_ != train.count)
    throw ValidationError(fmt::format(
        "the checkpoint was written for {} training samples per epoch but the data has {} — resume with the "
        "same data set, --limit and --validation-split",
        train_count_, train.count));
  train_count_ = train.count;
  num_classes_ = train.num_classes;
  stopped_ = stop_agreed_ = false;
  const uint64_t steps_at_start = steps_done_;  // max_steps counts per fit(), the same on every rank
  const size_t steps = (train.count + options_.batch - 1) / options_.batch;
  for (auto& r : replicas_) {
    r->set_train_data(train);
    r->reserve_slots(steps);
  }
  if (!restored_metrics_.empty()) {  // the global sums go to one replica of rank 0, zeros elsewhere
    const std::vector<float> zeros(restored_metrics_.size(), 0.f);
    for (size_t k = 0; k < replicas_.size(); ++k)
      replicas_[k]->set_metric_slots(k == 0 && collective_->rank() == 0 ? restored_metrics_ : zeros);
    restored_metrics_.clear();
  }
  while (epoch_ < options_.epochs) {
    const size_t epoch = epoch_ + 1;
    const auto start = Clock::now();
    host_order_ = epoch_order(train.count, options_.seed, uint32_t(epoch - 1));
    for (auto& r : replicas_) r->set_epoch_order(host_order_);
    const size_t first_step = step_;
    while (step_ < steps) {
      if (stop_agreed_ || (options_.max_steps && steps_done_ - steps_at_start >= options_.max_steps)) {
        write_checkpoint_if_asked();
        stopped_ = true;
        return history_;
      }
      const size_t first = step_ * options_.batch;
      step(first, std::min(options_.batch, train.count - first), step_);
      ++step_;
      if (options_.checkpoint_every && steps_done_ % options_.checkpoint_every == 0 && step_ < steps)
        write_checkpoint_if_asked();
    }
    // Per step, then over steps in double: the order a resumed epoch repeats exactly.
    const std::vector<float> slots = global_slots(steps);
    double loss = 0, correct = 0;
    for (size_t s = 0; s < steps; ++s) loss += slots[2 * s], correct += slots[2 * s + 1];
    EpochStats stats;
    stats.epoch = epoch;
    stats.steps = steps;
    stats.train_loss = loss / double(train.count);
    stats.train_accuracy = correct / double(train.count);
    const size_t trained = std::min(train.count, (steps - first_step) * options_.batch);
    stats.samples_per_second = double(trained) / since(start);
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

EvalStats DataParallelTrainer::evaluate(const data::Dataset& data) {
  Replica& first = *replicas_[0];
  if (eval_source_ != &data) {  // uploaded once per data set, not once per epoch
    eval_data_ = std::make_unique<DeviceDataset>(first.runtime(), data);
    eval_source_ = &data;
  }
  if (!evaluator_) evaluator_ = std::make_unique<Evaluator>(first.model(), options_.batch);
  return evaluator_->evaluate(*eval_data_);
}

}  // namespace anycl
