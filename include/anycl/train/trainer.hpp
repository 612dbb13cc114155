// The training loop — the only one: epochs of shuffled mini-batches over N ≥ 1 replicas of the
// model (one device, several devices of this process, and/or one per MPI process), gathered on
// the device, forward, fused loss, backward, gradients combined (nothing to do for one replica),
// optimizer update — with no blocking host wait inside a step. Loss and metric accumulate in
// device-side slots, read once per progress update and at epoch end.
//
//   anycl::Trainer trainer(model, *optimizer, options);              // one device
//   anycl::Trainer dp({&gpu, &cpu}, spec, {"rmsprop"}, options);     // data-parallel
//   trainer.fit(train, &test);
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "anycl/dist/collective.hpp"
#include "anycl/dist/replica.hpp"
#include "anycl/nn/sequential.hpp"
#include "anycl/optim/optimizer.hpp"
#include "anycl/optim/schedule.hpp"
#include "anycl/train/device_dataset.hpp"
#include "anycl/train/evaluator.hpp"
#include "anycl/train/run_config.hpp"

namespace anycl {

struct Checkpoint;

struct TrainOptions {
  size_t epochs = 20;
  size_t batch = 128;  // the global batch: split over the replicas
  uint64_t seed = 1;
  double progress_interval_s = 0;  // > 0: read metrics and call on_progress at most this often
  /// Non-empty: fit() writes a checkpoint here (atomically) at each epoch end, every
  /// checkpoint_every steps, and when it stops early. The previous one survives a failed write.
  std::string checkpoint_path;
  size_t checkpoint_every = 0;  // steps between checkpoints; 0: epoch ends only
  /// Stored in each checkpoint (typed: a checkpoint describes the run, never output paths).
  RunConfig run;
  /// Polled between steps (the library never installs signal handlers): once it reads true,
  /// fit() finishes the step, writes a checkpoint (if checkpoint_path is set) and returns with
  /// stopped() true. A std::atomic<bool> is safe to set from a signal handler.
  const std::atomic<bool>* stop = nullptr;
  /// > 0: fit() returns after this many training steps (as for `stop`: stopped() is true).
  uint64_t max_steps = 0;
  /// How many steps the host may enqueue ahead of the device (≥ 1). The host waits for step
  /// s − steps_ahead to finish before enqueueing step s, so the device always has work queued and
  /// a stop request is honoured within this many steps, not at the end of an epoch.
  size_t steps_ahead = 3;
  /// The learning rate per step (exponential, step, cosine decay from the optimizer's rate) or per
  /// epoch (reduce on plateau); constant by default. Set before each optimizer launch, no wait.
  /// A cosine warm-up rises from the optimizer's rate; given an OptimizerConfig whose lr is 0 (unset),
  /// from 0, as Keras' CosineDecay(0.0, ..., warmup_target=T) (an Optimizer: set_learning_rate(0)).
  LearningRateSchedule schedule;
};

/// One epoch's figures, as a metrics file row.
struct EpochStats {
  size_t epoch = 0;  // 1-based
  double train_loss = 0, train_accuracy = 0;
  bool has_eval = false;
  std::string eval_name;  // "val" or "test"
  EvalStats eval;
  double seconds = 0;             // whole epoch, evaluation included
  double samples_per_second = 0;  // training samples / training time
  size_t steps = 0;
  double learning_rate = 0;  // the rate of the epoch's last step (Keras' logs["learning_rate"])
};

/// A live view within an epoch (for progress bars).
struct Progress {
  size_t epoch = 0, epochs = 0, step = 0, steps = 0, samples = 0;
  double seconds = 0, loss = 0, accuracy = 0;
};

/// The result of train_on_batch(): the batch's mean loss and accuracy before the update.
struct BatchStats {
  double loss = 0, accuracy = 0;
  size_t count = 0;
};

class Trainer {
 public:
  /// One replica: `model` (built with max_batch >= options.batch, initialised) and `optimizer` on
  /// the model's runtime, both borrowed.
  Trainer(Sequential& model, Optimizer& optimizer, TrainOptions options);
  /// Data-parallel: one replica of `spec` per runtime (the same device may appear twice: two
  /// contexts), initialised from options.seed. `collective` (optional, not owned) spreads the
  /// replicas over processes too. `shares` (optional) gives each local replica's relative share of
  /// a batch (the same on every process), or one per replica of the whole world, e.g.
  /// measure_speed_shares(); default equal.
  Trainer(const std::vector<Runtime*>& runtimes, const ModelSpec& spec, const OptimizerConfig& optimizer,
          TrainOptions options, Collective* collective = nullptr, std::vector<double> shares = {});
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  /// Observers: a live view within an epoch (every progress_interval_s; one process only), and
  /// each completed epoch's figures.
  std::function<void(const Progress&)> on_progress;
  std::function<void(const EpochStats&)> on_epoch_end;

  /// Trains up to epoch options.epochs over `train`, evaluating on `eval` (if given) after each,
  /// from the trainer's position: epoch 1 for a new trainer, the checkpoint's after resume_from().
  /// Returns every completed epoch's figures (those restored from a checkpoint included).
  /// Throws NumericalError when the loss or the weights become NaN/inf (found at the metric
  /// reads that happen anyway: progress, checkpoints, epoch ends); no checkpoint is written then.
  /// This overload takes data already on the device: one replica only, on the data's runtime.
  std::vector<EpochStats> fit(const DeviceDataset& train, const DeviceDataset* eval = nullptr,
                              const std::string& eval_name = "test");
  /// The same from host data, uploaded once to every replica's device (evaluation on the first).
  /// With MPI the processes agree on a stop (any one's flag stops all after the same step) and
  /// rank 0 alone writes the checkpoints.
  std::vector<EpochStats> fit(const data::Dataset& train, const data::Dataset* eval = nullptr,
                              const std::string& eval_name = "test");
  /// One training step on the samples `rows` of `data` (indices), for an application's own loop:
  /// one replica only. Blocks to return the batch's loss and accuracy (before the update).
  BatchStats train_on_batch(const DeviceDataset& data, const std::vector<uint32_t>& rows);

  /// Runs each of the model's GEMMs once at the batch size on every replica's device, so CLBlast
  /// has compiled its kernels before the first step; optional, fit() works without it.
  void warm_up();

  /// True when the last fit() returned early because options.stop or max_steps was set.
  bool stopped() const noexcept { return stopped_; }
  /// Epochs completed, and steps done within the epoch in progress.
  size_t epochs_done() const noexcept { return epoch_; }
  size_t step_in_epoch() const noexcept { return step_; }
  /// Completed epochs' figures.
  const std::vector<EpochStats>& history() const noexcept { return history_; }
  /// Training steps taken so far (the dropout RNG's step counter).
  uint64_t steps_done() const noexcept { return steps_done_; }

  /// The full training state at the current position (between steps): blocks on the device; with
  /// MPI every process must call it. Per-step metrics are summed over all replicas, so a
  /// checkpoint of N replicas resumes on M. NumericalError when the weights or metrics are not finite.
  Checkpoint checkpoint();
  /// Writes checkpoint() to `path` atomically (from rank 0; collective like checkpoint()).
  void save_checkpoint(const std::string& path);
  /// Every process reads `path` and they agree before anything changes: when it cannot be read
  /// on some process, or the processes read different checkpoints, every process throws (no hang).
  /// Then as resume_from(Checkpoint).
  void resume_from(const std::string& path);
  /// Restores weights, optimizer state, counters and position from a checkpoint written for the
  /// same architecture, optimizer, batch and seed (ValidationError naming the difference otherwise).
  void resume_from(const Checkpoint& checkpoint);

  /// Loss and accuracy of the model (dropout off) on `data`, on the first replica.
  EvalStats evaluate(const DeviceDataset& data);
  EvalStats evaluate(const data::Dataset& data);

  /// Replicas in this process; replica k's model (all replicas hold the same weights), its
  /// optimizer and its runtime.
  size_t replica_count() const noexcept { return replicas_.size(); }
  Replica& replica(size_t k) { return *replicas_.at(k); }
  Sequential& model();
  /// When the first training step finished on the device (recorded by an event callback, so no
  /// host wait); empty until then.
  std::optional<std::chrono::steady_clock::time_point> first_step_finished() const;
  /// Launches and host waits of the training steps alone (evaluation and epoch-end reads
  /// excluded), on the first replica's runtime. Waits that only keep the host from running more
  /// than options.steps_ahead steps ahead are in run_ahead_waits, not host_waits.
  const RuntimeCounters& step_counters() const noexcept { return step_counters_; }
  /// The learning rate of the next step (the schedule's, from the optimizer's initial rate).
  float learning_rate() const;
  /// The optimizer's rate the schedule starts from, and the schedule's state (ReduceLROnPlateau's).
  float initial_learning_rate() const noexcept { return initial_lr_; }
  const ScheduleState& schedule_state() const noexcept { return schedule_state_; }

 private:
  struct Uploads;
  std::vector<EpochStats> run(const std::vector<const DeviceDataset*>& train, const DeviceDataset* eval,
                              const std::string& eval_name);
  std::pair<size_t, size_t> shard(size_t rows, size_t k) const;
  void step(size_t first, size_t rows, size_t slot);
  bool combine_gradients();         // returns the agreed stop vote
  void combine_state(size_t rows);  // the replicas' moving statistics, averaged (BatchNormalization)
  std::vector<float> global_slots(size_t slots);
  void write_checkpoint_if_asked();
  void note_first_step();
  bool single() const noexcept;            // one replica in the whole world: no gradient exchange
  void hold_back();                        // waits while the device is options_.steps_ahead steps behind
  void mark_step();                        // marks the end of the step just enqueued
  void check_health(const Checkpoint& c);  // NumericalError when the loss exploded since the last one
  // Learning-rate schedules: checks options.schedule and notes the optimizer's rate; at an epoch's
  // end, its rate into `stats` and ReduceLROnPlateau's rule.
  void start_schedule();
  void end_epoch_schedule(EpochStats& stats);

  TrainOptions options_;
  Collective single_process_;
  Collective* collective_;
  std::vector<std::unique_ptr<Replica>> replicas_;
  std::vector<double> bounds_;  // cumulative shares of the world's replicas, size world+1
  std::vector<float> sum_grads_, chunk_;
  std::vector<uint32_t> host_order_;  // must outlive the non-blocking upload of each epoch's order
  std::unique_ptr<Uploads> uploads_;  // host data sets uploaded by fit(data::Dataset)
  std::unique_ptr<Evaluator> evaluator_;
  uint64_t steps_done_ = 0;
  size_t epoch_ = 0, step_ = 0;  // position: epochs completed, steps done in the next one
  size_t train_count_ = 0, num_classes_ = 0;
  std::vector<float> restored_metrics_;  // partial-epoch slots from a checkpoint, uploaded by fit()
  std::vector<EpochStats> history_;
  bool stopped_ = false, stop_agreed_ = false;
  RuntimeCounters step_counters_;
  // Nanoseconds (steady clock) when the first step finished, 0 before; shared with the callback.
  std::shared_ptr<std::atomic<int64_t>> first_step_ns_ = std::make_shared<std::atomic<int64_t>>(0);
  bool first_step_noted_ = false;
  std::vector<cl_event> step_marks_;  // per step slot modulo steps_ahead: its end marker, or null
  double best_window_loss_ = -1;      // lowest mean step loss between two checkpoints (−1: none yet)
  std::string last_healthy_;          // where the last checkpoint was written ("" before the first)
  size_t window_start_ = 0;           // step of the epoch where the current health window starts
  float initial_lr_ = 0;              // the optimizer's rate when the trainer was made: the schedule's start
  ScheduleState schedule_state_;
};

}  // namespace anycl
