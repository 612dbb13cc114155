// Data-parallel training: every global batch is split into shards, one per replica (several
// devices in this process, and/or one per MPI process); each replica computes its shard's
// gradients, the gradients are summed (in a fixed order, so the result is deterministic) and
// every replica applies the same update.
//
//   anycl::Runtime gpu({"gpu"}), cpu({"cpu"});
//   anycl::DataParallelTrainer dp({&gpu, &cpu}, model_spec, {"rmsprop"}, options);
//   dp.fit(train, &test);
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "anycl/dist/collective.hpp"
#include "anycl/dist/replica.hpp"
#include "anycl/train/trainer.hpp"

namespace anycl {

class DataParallelTrainer {
 public:
  /// One replica per runtime (the same device may appear twice: two contexts). `collective`
  /// (optional, not owned) spreads the shards over processes too. `shares` (optional) gives each
  /// local replica's relative share of a batch, e.g. measured device speeds; default equal.
  DataParallelTrainer(const std::vector<Runtime*>& runtimes, const ModelSpec& spec,
                      const OptimizerConfig& optimizer, TrainOptions options,
                      Collective* collective = nullptr, std::vector<double> shares = {});

  std::function<void(const EpochStats&)> on_epoch_end;

  /// options.epochs epochs over `train`, evaluating `eval` (if given) on the first replica.
  std::vector<EpochStats> fit(const data::Dataset& train, const data::Dataset* eval = nullptr,
                              const std::string& eval_name = "test");
  /// Loss and accuracy of the (identical) model on `data`, computed on the first replica.
  EvalStats evaluate(const data::Dataset& data);

  /// Replicas in this process (one per runtime).
  size_t replica_count() const noexcept { return replicas_.size(); }
  /// Local replica i (its model holds the trained weights; all replicas are identical).
  Replica& replica(size_t i) { return *replicas_.at(i); }
  /// Global training steps taken so far.
  uint64_t steps_done() const noexcept { return steps_done_; }

 private:
  /// Row range [lo, hi) of a batch of `rows` for local replica k.
  std::pair<size_t, size_t> shard(size_t rows, size_t k) const;
  void step(size_t first, size_t rows, size_t slot);

  TrainOptions options_;
  Collective single_process_;
  Collective* collective_;
  std::vector<std::unique_ptr<Replica>> replicas_;
  std::vector<double> bounds_;  // cumulative shares of the global world, size world+1
  std::vector<float> host_grads_, sum_grads_;
  std::vector<uint32_t> host_order_;
  const data::Dataset* eval_source_ = nullptr;
  std::unique_ptr<DeviceDataset> eval_data_;
  std::unique_ptr<Evaluator> evaluator_;
  uint64_t steps_done_ = 0;
};

}  // namespace anycl
