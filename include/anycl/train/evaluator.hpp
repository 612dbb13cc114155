// Evaluation and prediction with a built model (dropout off): loss and accuracy reduced on the
// device, or class probabilities brought back to the host.
#pragma once

#include <memory>
#include <vector>

#include "anycl/nn/sequential.hpp"
#include "anycl/train/device_dataset.hpp"

namespace anycl {

class GatherBatch;  // src/ops/gather.hpp
class Loss;         // anycl/losses/loss.hpp

/// Loss and accuracy (a classifier: softmax or binary cross-entropy) or loss and mean absolute error
/// (regression: mse, mae, huber) over a data set.
struct EvalStats {
  double loss = 0, accuracy = 0;  // accuracy: the loss's metric, as in training — the MAE for regression
  size_t count = 0;
  double mae = 0;  // regression: mean over samples of the mean |y − t| over outputs; 0 for a classifier
};

class Evaluator {
 public:
  /// Works in batches of `batch` rows (at most the model's max_batch).
  Evaluator(Sequential& model, size_t batch);
  ~Evaluator();
  Evaluator(const Evaluator&) = delete;
  Evaluator& operator=(const Evaluator&) = delete;
  /// The mean of the model's loss on `data` and its metric: accuracy of a softmax classifier (class
  /// labels) or a binary cross-entropy one (0/1 float targets per output, Keras' binary accuracy),
  /// the mean absolute error of a regression model (float targets); one host wait at the end.
  EvalStats evaluate(const DeviceDataset& data);
  /// Probabilities (softmax rows, or sigmoid per output) for samples [first, first+count):
  /// (count, outputs) row-major.
  std::vector<float> probabilities(const DeviceDataset& data, size_t first, size_t count);

 private:
  void check(const DeviceDataset& data) const;
  const DeviceBuffer& identity_order(size_t count);

  Sequential& model_;
  size_t batch_;
  Runtime& rt_;
  std::unique_ptr<GatherBatch> gather_;
  std::unique_ptr<Loss> loss_;  // the model's own loss
  Tensor x_, probs_;
  DeviceBuffer labels_, metrics_, order_;
  size_t order_count_ = 0;
};

/// Blocking read of `slots` (loss, correct) metric pairs, summed in double.
std::pair<double, double> read_metric_sums(Runtime& rt, const DeviceBuffer& metrics, size_t slots);
/// The first `slots` metric slots, (loss sum, correct) each; one blocking read (none for 0 slots).
std::vector<float> read_metric_slots(Runtime& rt, const DeviceBuffer& metrics, size_t slots);

}  // namespace anycl
