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
  /// local replica's relative share of a batch (the same on every process), or one per replica
  /// of the whole world, e.g. measure_speed_shares(); default equal.
  DataParallelTrainer(const std::vector<Runtime*>& runtimes, const ModelSpec& spec,
                      const OptimizerConfig& optimizer, TrainOptions options,
                      Collective* collective = nullptr, std::vector<double> shares = {});

  std::function<void(const EpochStats&)> on_epoch_end;

  /// Trains up to epoch options.epochs over `train`, evaluating `eval` (if given) on the first
  /// replica, from the trainer's position (epoch 1, or the checkpoint's after resume_from()).
  /// Checkpoints and options.stop work as in Trainer::fit; with MPI the processes agree on a stop
  /// (any one's flag stops all after the same step) and rank 0 alone writes the checkpoints.
  /// Returns every completed epoch's figures (those restored from a checkpoint included).
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
  /// True when the last fit() returned early because options.stop was set (in any process).
  bool stopped() const noexcept { return stopped_; }
  /// Epochs completed, steps done within the epoch in progress, and completed epochs' figures.
  size_t epochs_done() const noexcept { return epoch_; }
  size_t step_in_epoch() const noexcept { return step_; }
  const std::vector<EpochStats>& history() const noexcept { return history_; }

  /// The training state in the single-device format (batch = the global batch; per-step metrics
  /// summed over all replicas), so Trainer can resume it and vice versa. Collective: with MPI
  /// every process must call it. NumericalError when the weights or metrics are not finite.
  Checkpoint checkpoint();
  /// Writes checkpoint() to `path` atomically from rank 0 (collective, like checkpoint()).
  void save_checkpoint(const std::string& path);
  /// Every process reads `path` and they agree before anything changes: when it cannot be read
  /// on some process, or the processes read different checkpoints, every process throws (no hang).
  /// Then as Trainer::resume_from (same architecture, optimizer, global batch and seed).
  void resume_from(const std::string& path);
  void resume_from(const Checkpoint& checkpoint);

 private:
  /// Row range [lo, hi) of a batch of `rows` for local replica k.
  std::pair<size_t, size_t> shard(size_t rows, size_t k) const;
  void step(size_t first, size_t rows, size_t slot);
  // Per-step (loss sum, correct) of slots [0, slots) summed over every replica of every process
  // (blocking, collective); NumericalError when a loss is not finite.
  std::vector<float> global_slots(size_t slots);
  void write_checkpoint_if_asked();

  TrainOptions options_;
  Collective single_process_;
  Collective* collective_;
  std::vector<std::unique_ptr<Replica>> replicas_;
  std::vector<double> bounds_;            // cumulative shares of the global world, size world+1
  std::vector<float> sum_grads_, chunk_;  // summed gradients; one layer's sum in progress
  std::vector<uint32_t> host_order_;
  const data::Dataset* eval_source_ = nullptr;
  std::unique_ptr<DeviceDataset> eval_data_;
  std::unique_ptr<Evaluator> evaluator_;
  uint64_t steps_done_ = 0;
  size_t epoch_ = 0, step_ = 0;  // position: epochs completed, steps done in the next one
  size_t train_count_ = 0, num_classes_ = 0;
  std::vector<float> restored_metrics_;  // partial-epoch slots from a checkpoint, uploaded by fit()
  std::vector<EpochStats> history_;
  bool stopped_ = false, stop_agreed_ = false;
};

}  // namespace anycl
