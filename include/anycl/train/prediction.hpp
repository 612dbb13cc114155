// Prediction on inputs without labels, and the per-class figures of predictions against labels
// (per-class accuracy, confusion matrix) — what `anycl predict` and `anycl eval` print.
//
//   std::vector<float> p = anycl::predict(model, new_x);   // m × k class probabilities
//   auto classes = anycl::predicted_classes(p, k);
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "anycl/nn/sequential.hpp"

namespace anycl {

/// The model's outputs for x (m rows × input_features, row-major): m × output_features values,
/// computed on the model's device (dropout off) in batches of at most model.max_batch().
/// For a classifier these are the logits; for a regression model, its predictions.
std::vector<float> predict_outputs(Sequential& model, const std::vector<float>& x);
/// Predictions for x (m × input_features): m × k values, k = output_features, on the device —
/// softmax rows (softmax cross-entropy), the sigmoid of each output (binary cross-entropy), or the
/// raw outputs (a regression loss). No labels needed. ValidationError when x is not whole rows of the model's
/// input.
std::vector<float> predict(Sequential& model, const std::vector<float>& x);

/// Prediction that allocates once: the input and output tensors and the loss's probability kernel for
/// batches of up to the model's max_batch() rows, reused by every run() (the C API keeps one per
/// model and runtime, so a batch-1 call is one write, the forward pass and one blocking read).
/// predict() and predict_outputs() run through one, so results are the same bit for bit.
class Predictor {
 public:
  /// For a built model; `softmax`: probabilities when its loss predicts them (softmax or sigmoid), else
  /// raw outputs; false: raw outputs.
  Predictor(Sequential& model, bool softmax);
  /// For a built model: probabilities when its loss predicts classes, raw outputs otherwise.
  explicit Predictor(Sequential& model);
  ~Predictor();
  Predictor(const Predictor&) = delete;
  Predictor& operator=(const Predictor&) = delete;

  /// Writes the outputs for `rows` rows of x (rows × input_features floats, row-major) to `out`
  /// (rows × output_features floats), in batches of at most max_batch() rows.
  void run(const float* x, size_t rows, float* out);
  /// The model it predicts with.
  Sequential& model() const noexcept { return model_; }

 private:
  struct State;
  Sequential& model_;
  std::unique_ptr<State> state_;
};

/// The index of the largest value in each row of `values` (rows × classes).
std::vector<size_t> predicted_classes(const std::vector<float>& values, size_t classes);

/// Predictions against true class indices.
struct ClassReport {
  size_t classes = 0;
  std::vector<size_t> confusion;  // classes × classes, row: true class, column: predicted
  std::vector<size_t> totals;     // samples per true class
  /// Share of class c's samples predicted as c (0 for a class with no samples).
  double accuracy(size_t c) const;
  /// Share of all samples predicted right.
  double overall_accuracy() const;
};
/// Confusion matrix and per-class totals; ValidationError for a label or prediction outside
/// [0, classes) or sizes that differ.
ClassReport class_report(const std::vector<int32_t>& labels, const std::vector<size_t>& predicted,
                         size_t classes);

}  // namespace anycl
