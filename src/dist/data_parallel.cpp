// The data-parallel step: shards computed concurrently on every local device, gradients summed
// on the host in replica order (then across processes), the same update applied everywhere.
#include "anycl/dist/data_parallel.hpp"

#include <fmt/format.h>

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
  if (shares.empty()) shares.assign(runtimes.size(), 1.0);
  if (shares.size() != runtimes.size())
    throw ValidationError(fmt::format("{} shares for {} devices", shares.size(), runtimes.size()));
  for (double s : shares)
    if (!(std::isfinite(s) && s > 0)) throw ValidationError("device shares must be positive numbers");
  // Every process holds the same number of local replicas with the same shares; the world is
  // processes × local replicas, in rank-major order.
  const size_t world = size_t(collective_->size()) * runtimes.size();
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
  // The sum runs in replica order (then MPI's), so every run of the same set-up is identical.
  for (size_t k = 0; k < replicas_.size(); ++k) {
    replicas_[k]->read_gradients(host_grads_);
    if (k == 0)
      sum_grads_ = host_grads_;
    else
      for (size_t i = 0; i < sum_grads_.size(); ++i) sum_grads_[i] += host_grads_[i];
  }
  collective_->sum(sum_grads_);
  for (auto& r : replicas_) {
    r->write_gradients(sum_grads_);
    r->apply_update();
  }
  ++steps_done_;
}

std::vector<EpochStats> DataParallelTrainer::fit(const data::Dataset& train, const data::Dataset* eval,
                                                 const std::string& eval_name) {
  if (train.features() != replicas_[0]->model().input_features())
    throw ValidationError(fmt::format("the model takes {} input features but the data has {}",
                                      replicas_[0]->model().input_features(), train.features()));
  const size_t steps = (train.count + options_.batch - 1) / options_.batch;
  for (auto& r : replicas_) {
    r->set_train_data(train);
    r->reserve_slots(steps);
  }
  std::vector<EpochStats> history;
  for (size_t epoch = 1; epoch <= options_.epochs; ++epoch) {
    const auto start = Clock::now();
    host_order_ = epoch_order(train.count, options_.seed, uint32_t(epoch - 1));
    for (auto& r : replicas_) r->set_epoch_order(host_order_);
    for (size_t s = 0; s < steps; ++s) {
      const size_t first = s * options_.batch;
      step(first, std::min(options_.batch, train.count - first), s);
    }
    std::vector<double> sums(2, 0.0);
    for (auto& r : replicas_) {
      const auto [loss, correct] = r->metric_sums(steps);
      sums[0] += loss, sums[1] += correct;
    }
    collective_->sum(sums);
    EpochStats stats;
    stats.epoch = epoch;
    stats.steps = steps;
    stats.train_loss = sums[0] / double(train.count);
    stats.train_accuracy = sums[1] / double(train.count);
    stats.samples_per_second = double(train.count) / since(start);
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
