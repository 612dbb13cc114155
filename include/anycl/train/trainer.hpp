// The training loop: epochs of shuffled mini-batches gathered on the device, forward, fused
// softmax-cross-entropy, backward, optimizer update — with no blocking host wait inside a step.
// Loss and accuracy accumulate in device-side slots, read once per progress update and at
// epoch end.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "anycl/nn/sequential.hpp"
#include "anycl/ops/gather.hpp"
#include "anycl/ops/softmax_xent.hpp"
#include "anycl/optim/optimizer.hpp"
#include "anycl/train/device_dataset.hpp"
#include "anycl/train/evaluator.hpp"

namespace anycl {

struct Checkpoint;

struct TrainOptions {
  size_t epochs = 20;
  size_t batch = 128;
  uint64_t seed = 1;
  double progress_interval_s = 0;  // > 0: read metrics and call on_progress at most this often
  /// Non-empty: fit() writes a checkpoint here (atomically) at each epoch end, every
  /// checkpoint_every steps, and when it stops early. The previous one survives a failed write.
  std::string checkpoint_path;
  size_t checkpoint_every = 0;  // steps between checkpoints; 0: epoch ends only
  std::string checkpoint_app;   // stored verbatim in each checkpoint (Checkpoint::app)
  /// Polled between steps (the library never installs signal handlers): once it reads true,
  /// fit() finishes the step, writes a checkpoint (if checkpoint_path is set) and returns with
  /// stopped() true. A std::atomic<bool> is safe to set from a signal handler.
  const std::atomic<bool>* stop = nullptr;
  /// > 0: fit() returns after this many training steps (as for `stop`: stopped() is true).
  uint64_t max_steps = 0;
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
};

/// A live view within an epoch (for progress bars).
struct Progress {
  size_t epoch = 0, epochs = 0, step = 0, steps = 0, samples = 0;
  double seconds = 0, loss = 0, accuracy = 0;
};

class Trainer {
 public:
  /// The model must be built with max_batch >= options.batch.
  Trainer(Sequential& model, Optimizer& optimizer, TrainOptions options);

  std::function<void(const Progress&)> on_progress;
  std::function<void(const EpochStats&)> on_epoch_end;

  /// Trains up to epoch options.epochs over `train`, evaluating on `eval` (if given) after each,
  /// from the trainer's position: epoch 1 for a new trainer, the checkpoint's after resume_from().
  /// Returns every completed epoch's figures (those restored from a checkpoint included).
  /// Throws NumericalError when the loss or the weights become NaN/inf (found at the metric
  /// reads that happen anyway: progress, checkpoints, epoch ends); no checkpoint is written then.
  std::vector<EpochStats> fit(const DeviceDataset& train, const DeviceDataset* eval = nullptr,
                              const std::string& eval_name = "test");
  /// True when the last fit() returned early because options.stop was set.
  bool stopped() const noexcept { return stopped_; }
  /// Epochs completed, and steps done within the epoch in progress.
  size_t epochs_done() const noexcept { return epoch_; }
  size_t step_in_epoch() const noexcept { return step_; }
  /// Completed epochs' figures.
  const std::vector<EpochStats>& history() const noexcept { return history_; }

  /// The full training state at the current position (between steps): blocks on the device.
  /// Throws NumericalError instead when the weights or metrics are not finite.
  Checkpoint checkpoint();
  /// Writes checkpoint() to `path` atomically.
  void save_checkpoint(const std::string& path);
  /// Restores weights, optimizer state, counters and position from a checkpoint written for the
  /// same architecture, optimizer, batch and seed (ValidationError naming the difference otherwise).
  void resume_from(const std::string& path);
  void resume_from(const Checkpoint& checkpoint);
  /// Loss and accuracy of the model (dropout off) on `data`.
  EvalStats evaluate(const DeviceDataset& data);
  /// Training steps taken so far (the dropout RNG's step counter).
  uint64_t steps_done() const noexcept { return steps_done_; }
  /// When this trainer's first training step finished on the device (recorded by an event
  /// callback, so no host wait); empty until then.
  std::optional<std::chrono::steady_clock::time_point> first_step_finished() const;
  /// Launches and host waits of the training steps alone (evaluation and epoch-end reads excluded).
  const RuntimeCounters& step_counters() const noexcept { return step_counters_; }

 private:
  void train_step(const DeviceDataset& data, const compute::buffer& order, size_t first, size_t rows,
                  size_t slot);
  // Blocking read of the first `slots` metric slots of the epoch in progress; NumericalError on NaN/inf.
  std::vector<float> read_slots(size_t slots);
  void write_checkpoint_if_asked();
  void note_first_step();  // marks the queue so first_step_finished() learns when it got there

  Sequential& model_;
  Optimizer& optimizer_;
  TrainOptions options_;
  Runtime& rt_;
  GatherBatch gather_;
  SoftmaxCrossEntropy loss_;
  Evaluator evaluator_;
  Tensor x_, dlogits_;
  compute::buffer labels_, metrics_, order_;
  std::vector<uint32_t> host_order_;  // must outlive the non-blocking upload of each epoch's order
  uint64_t steps_done_ = 0;
  size_t epoch_ = 0, step_ = 0;  // position: epochs completed, steps done in the next one
  size_t train_count_ = 0, num_classes_ = 0;
  std::vector<float> restored_metrics_;  // partial-epoch slots from a checkpoint, uploaded by fit()
  std::vector<EpochStats> history_;
  bool stopped_ = false;
  RuntimeCounters step_counters_;
  // Nanoseconds (steady clock) when the first step finished, 0 before; shared with the callback.
  std::shared_ptr<std::atomic<int64_t>> first_step_ns_ = std::make_shared<std::atomic<int64_t>>(0);
  bool first_step_noted_ = false;
};

}  // namespace anycl
