// Prediction without labels: host rows → device in batches of the model's max_batch → forward
// (dropout off) → softmax for a classifier → host. And the per-class report of predictions.
#include "anycl/train/prediction.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <optional>

#include "anycl/error.hpp"
#include "anycl/losses/loss.hpp"
#include "anycl/ops/softmax_xent.hpp"

namespace anycl {
namespace {

// The model's outputs for every row of x, with a softmax per row when `softmax` is set.
std::vector<float> run_batches(Sequential& model, const std::vector<float>& x, bool softmax) {
  Runtime& rt = model.runtime();  // ValidationError before build()
  const size_t d = model.input_features(), k = model.output_features();
  if (x.size() % d != 0)
    throw ValidationError(
        fmt::format("predict: x holds {} values, which is not a whole number of rows of the model's {} input "
                    "features — x must be m rows × {}, row-major",
                    x.size(), d, d));
  const size_t m = x.size() / d, batch = model.max_batch();
  std::vector<float> out;
  if (m == 0) return out;
  out.reserve(m * k);
  Tensor inputs(rt, {std::min(batch, m), d}), probs;
  std::optional<SoftmaxCrossEntropy> softmax_op;
  if (softmax) {
    softmax_op.emplace(rt);
    probs = Tensor(rt, {std::min(batch, m), k});
  }
  const StepContext ctx;  // training = false: dropout is the identity
  for (size_t first = 0; first < m; first += batch) {
    const size_t rows = std::min(batch, m - first);
    Tensor in = inputs.rows(0, rows);
    in.upload(x.data() + first * d, rows * d);
    const Tensor logits = model.forward(in, ctx);
    Tensor result = logits;
    if (softmax) {
      result = probs.rows(0, rows);
      softmax_op->probabilities(logits, result);
    }
    const std::vector<float> part = result.download();
    out.insert(out.end(), part.begin(), part.end());
  }
  return out;
}

}  // namespace

std::vector<float> predict_outputs(Sequential& model, const std::vector<float>& x) {
  return run_batches(model, x, /*softmax=*/false);
}

std::vector<float> predict(Sequential& model, const std::vector<float>& x) {
  // A classifier (softmax cross-entropy) gives class probabilities; a regression model (MSE) its
  // raw outputs.
  const bool classifier = make_loss(model.runtime(), model.loss())->predicts_classes();
  return run_batches(model, x, /*softmax=*/classifier);
}

std::vector<size_t> predicted_classes(const std::vector<float>& values, size_t classes) {
  if (classes == 0 || values.size() % classes != 0)
    throw ValidationError(
        fmt::format("predicted_classes: {} values are not whole rows of {} classes", values.size(), classes));
  std::vector<size_t> out(values.size() / classes);
  for (size_t i = 0; i < out.size(); ++i) {
    const float* row = values.data() + i * classes;
    out[i] = size_t(std::max_element(row, row + classes) - row);
  }
  return out;
}

double ClassReport::accuracy(size_t c) const {
  return totals.at(c) ? double(confusion[c * classes + c]) / double(totals[c]) : 0.0;
}

double ClassReport::overall_accuracy() const {
  size_t right = 0, all = 0;
  for (size_t c = 0; c < classes; ++c) right += confusion[c * classes + c], all += totals[c];
  return all ? double(right) / double(all) : 0.0;
}

ClassReport class_report(const std::vector<int32_t>& labels, const std::vector<size_t>& predicted,
                         size_t classes) {
  if (labels.size() != predicted.size())
    throw ValidationError(
        fmt::format("class_report: {} labels but {} predictions", labels.size(), predicted.size()));
  ClassReport r;
  r.classes = classes;
  r.confusion.assign(classes * classes, 0);
  r.totals.assign(classes, 0);
  for (size_t i = 0; i < labels.size(); ++i) {
    if (labels[i] < 0 || size_t(labels[i]) >= classes || predicted[i] >= classes)
      throw ValidationError(
          fmt::format("class_report: sample {} has label {} and prediction {}, but there are "
                      "{} classes",
                      i, labels[i], predicted[i], classes));
    ++r.confusion[size_t(labels[i]) * classes + predicted[i]];
    ++r.totals[size_t(labels[i])];
  }
  return r;
}

}  // namespace anycl
