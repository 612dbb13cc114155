// One copy of the model on one device, with its resident data, buffers and optimizer: the unit
// the training loop drives (one replica for single-device training, several for data-parallel).
// Each replica computes gradients on its shard of every global batch; with several replicas the
// shards' gradients are summed (in process or through MPI) and every replica applies the same
// update, so the replicas stay identical.
#pragma once

#include <memory>
#include <vector>

#include "anycl/losses/loss.hpp"
#include "anycl/nn/sequential.hpp"
#include "anycl/optim/optimizer.hpp"
#include "anycl/train/device_dataset.hpp"

namespace anycl {

class GatherBatch;  // src/ops/gather.hpp

class Replica {
 public:
  /// Builds `spec` on `rt` for shards of up to `max_rows` rows, initialised from `seed`.
  Replica(Runtime& rt, const ModelSpec& spec, const OptimizerConfig& optimizer, size_t max_rows,
          uint64_t seed);
  /// Borrows a built model and its optimizer (both outlive the replica); shards of up to
  /// `max_rows` rows (at most the model's max_batch). `seed` drives dropout.
  Replica(Sequential& model, Optimizer& optimizer, size_t max_rows, uint64_t seed);
  ~Replica();  // waits for gradient copies still in flight into its host buffer
  Replica(const Replica&) = delete;
  Replica& operator=(const Replica&) = delete;

  /// Uploads the training split (once).
  void set_train_data(const data::Dataset& train);
  /// Uses a split already on this replica's device (borrowed: it must outlive the training).
  void use_train_data(const DeviceDataset& train);
  /// Uploads an epoch's sample order (indices into the training split). Non-blocking unless
  /// `blocking`: then `order` must stay alive until the next metric read.
  void set_epoch_order(const std::vector<uint32_t>& order, bool blocking = false);
  /// Forward and backward on rows [lo, hi) of the global batch that starts at position `first`
  /// of the epoch order and has `global_rows` rows. Gradients are scaled by 1/global_rows, so
  /// the sum over all shards is the global batch's mean gradient; dropout masks use the rows'
  /// global positions, so they match a single-device run. Loss and accuracy go to metric `slot`.
  /// With `stage` (several replicas), each layer's gradients start copying to the host as soon as
  /// that layer's backward is enqueued (non-blocking), so they travel while the earlier layers'
  /// backward runs; without it (one replica) nothing leaves the device and nothing waits.
  void compute_gradients(size_t first, size_t lo, size_t hi, size_t global_rows, uint32_t step, size_t slot,
                         bool stage = true);
  /// Waits for the host copy of range `c` of model().gradient_ranges() and returns it (valid until
  /// the next compute_gradients).
  const float* wait_gradients(size_t c);
  /// Waits for every range and copies the gradients to `host`.
  void read_gradients(std::vector<float>& host);
  /// Blocking copy of summed gradients back to the device.
  void write_gradients(const std::vector<float>& host);
  /// One optimizer update from the current gradients.
  void apply_update();
  /// (loss sum, correct count) over metric slots [0, slots); blocking.
  std::pair<double, double> metric_sums(size_t slots);
  /// (loss sum, rows) of the current weights on this replica's shard of the last step's batch,
  /// dropout off (blocking): how healthy the weights are, as a checkpoint is about to keep them.
  std::pair<double, double> probe_last_batch();
  /// Makes room for `slots` metric slots (call before an epoch).
  void reserve_slots(size_t slots);
  /// The first `slots` metric slots, (loss sum, correct) each; blocking.
  std::vector<float> metric_slots(size_t slots);
  /// Overwrites the first values.size() / 2 metric slots (a resumed epoch's); blocking.
  void set_metric_slots(const std::vector<float>& values);

  /// The replica's model, optimizer and device.
  Sequential& model() noexcept { return *model_; }
  /// The metric slots (loss sum, metric sum) the loss writes per step.
  const DeviceBuffer& metrics() const noexcept { return metrics_; }
  /// model().gradient_ranges(), the order in which compute_gradients() finishes them.
  const std::vector<std::pair<size_t, size_t>>& gradient_ranges() const noexcept { return ranges_; }
  Optimizer& optimizer() noexcept { return *optimizer_; }
  Runtime& runtime() noexcept { return rt_; }
  /// The uploaded training split; ValidationError before set_train_data.
  const DeviceDataset& train_data() const;

 private:
  void allocate(size_t max_rows);

  Runtime& rt_;
  std::unique_ptr<Sequential> owned_model_;
  std::unique_ptr<Optimizer> owned_optimizer_;
  Sequential* model_ = nullptr;
  Optimizer* optimizer_ = nullptr;
  std::unique_ptr<DeviceDataset> owned_train_;
  const DeviceDataset* train_ = nullptr;
  uint64_t seed_;
  std::unique_ptr<GatherBatch> gather_;
  std::unique_ptr<Loss> loss_;  // the model's loss (softmax cross-entropy or mse)
  Tensor x_, dlogits_;
  DeviceBuffer labels_, metrics_, order_, probe_;
  size_t last_rows_ = 0;                           // rows of the last compute_gradients shard
  std::vector<std::pair<size_t, size_t>> ranges_;  // model_->gradient_ranges()
  std::vector<float> staged_;                      // host copy of the gradients
  std::vector<cl_event> staging_;                  // per range: its copy in flight, or null
  void stage(size_t c);                            // enqueues range c's copy to the host
};

}  // namespace anycl
