// Prediction on inputs without labels, and the per-class figures of predictions against labels
// (per-class accuracy, confusion matrix) — what `anycl predict` and `anycl eval` print.
//
//   std::vector<float> p = anycl::predict(model, new_x);   // m × k class probabilities
//   auto classes = anycl::predicted_classes(p, k);
#pragma once

#include <cstdint>
#include <vector>

#include "anycl/nn/sequential.hpp"

namespace anycl {

/// The model's outputs for x (m rows × input_features, row-major): m × output_features values,
/// computed on the model's device (dropout off) in batches of at most model.max_batch().
/// For a classifier these are the logits; for a regression model, its predictions.
std::vector<float> predict_outputs(Sequential& model, const std::vector<float>& x);
/// Class probabilities for x (m × input_features): m × k softmax rows, k = output_features, on
/// the device. No labels needed. ValidationError when x is not whole rows of the model's input.
std::vector<float> predict(Sequential& model, const std::vector<float>& x);

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
