// The training loop: epochs of shuffled mini-batches gathered on the device, forward, fused
// softmax-cross-entropy, backward, optimizer update — with no blocking host wait inside a step.
// Loss and accuracy accumulate in device-side slots, read once per progress update and at
// epoch end.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "anycl/nn/sequential.hpp"
#include "anycl/ops/gather.hpp"
#include "anycl/ops/softmax_xent.hpp"
#include "anycl/optim/optimizer.hpp"
#include "anycl/train/device_dataset.hpp"
#include "anycl/train/evaluator.hpp"

namespace anycl {

struct TrainOptions {
  size_t epochs = 20;
  size_t batch = 128;
  uint64_t seed = 1;
  double progress_interval_s = 0;  // > 0: read metrics and call on_progress at most this often
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

  /// Runs options.epochs epochs over `train`, evaluating on `eval` (if given) after each.
  std::vector<EpochStats> fit(const DeviceDataset& train, const DeviceDataset* eval = nullptr,
                              const std::string& eval_name = "test");
  /// Loss and accuracy of the model (dropout off) on `data`.
  EvalStats evaluate(const DeviceDataset& data);
  /// Training steps taken so far (the dropout RNG's step counter).
  uint64_t steps_done() const noexcept { return steps_done_; }
  /// Launches and host waits of the training steps alone (evaluation and epoch-end reads excluded).
  const RuntimeCounters& step_counters() const noexcept { return step_counters_; }

 private:
  void train_step(const DeviceDataset& data, const compute::buffer& order, size_t first, size_t rows,
                  size_t slot);

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
  RuntimeCounters step_counters_;
};

}  // namespace anycl
