// Prediction without labels: host rows → device in batches of the model's max_batch (one write)
// → forward (dropout off) → the loss's probabilities (softmax; sigmoid for binary cross-entropy) →
// host (one blocking read), with every buffer and kernel made once per Predictor. And the per-class
// report of predictions.
#include "anycl/train/prediction.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "anycl/error.hpp"
#include "anycl/losses/loss.hpp"
#include "blas/clblast_program_store.hpp"

namespace anycl {

struct Predictor::State {
  Tensor inputs, probs;        // max_batch rows each
  std::unique_ptr<Loss> loss;  // its probabilities (softmax or sigmoid); kernels fetched once, here
  bool kept = false;  // CLBlast's programs kept for the next process, after the first batch that ran GEMMs
};

Predictor::Predictor(Sequential& model, bool softmax) : model_(model), state_(std::make_unique<State>()) {
  Runtime& rt = model.runtime();  // ValidationError before build()
  state_->inputs = Tensor(rt, {model.max_batch(), model.input_features()});
  if (!softmax) return;
  state_->loss = make_loss(rt, model.loss());
  if (!state_->loss->predicts_classes()) {  // a regression loss: its outputs are the predictions
    state_->loss.reset();
    return;
  }
  state_->probs = Tensor(rt, {model.max_batch(), model.output_features()});
}

Predictor::Predictor(Sequential& model)
    : Predictor(model, /*softmax=*/true) {}  // raw outputs when the loss predicts no probabilities

Predictor::~Predictor() = default;

void Predictor::run(const float* x, size_t rows, float* out) {
  const size_t d = model_.input_features(), k = model_.output_features(), batch = model_.max_batch();
  const StepContext ctx;  // training = false: dropout is the identity
  for (size_t first = 0; first < rows; first += batch) {
    const size_t n = std::min(batch, rows - first);
    Tensor in = state_->inputs.rows(0, n);
    // Not blocking: the in-order queue runs the copy before the forward pass, and the blocking
    // read below returns only after both, while x is still the caller's.
    in.upload(x + first * d, n * d, /*blocking=*/false);
    Tensor result = model_.forward(in, ctx);
    if (state_->loss) {
      Tensor probs = state_->probs.rows(0, n);
      state_->loss->predictions(result, probs);
      result = probs;
    }
    result.download(out + first * k, n * k);
    // As the Trainer does after its first step: what CLBlast compiled for this model is kept, so that a
    // prediction-only process starts warm the next time (one row runs a fused kernel, no GEMM).
    if (!state_->kept && n > 1) {
      state_->kept = true;
      detail::keep_clblast_programs(model_.runtime());
    }
  }
}

namespace {

std::vector<float> run_predictor(Predictor& predictor, const std::vector<float>& x) {
  const Sequential& model = predictor.model();
  const size_t d = model.input_features(), k = model.output_features();
  if (x.size() % d != 0)
    throw ValidationError(
        fmt::format("predict: x holds {} values, which is not a whole number of rows of the model's {} input "
                    "features — x must be m rows × {}, row-major",
                    x.size(), d, d));
  std::vector<float> out(x.size() / d * k);
  predictor.run(x.data(), x.size() / d, out.data());
  return out;
}

}  // namespace

std::vector<float> predict_outputs(Sequential& model, const std::vector<float>& x) {
  Predictor predictor(model, /*softmax=*/false);
  return run_predictor(predictor, x);
}

std::vector<float> predict(Sequential& model, const std::vector<float>& x) {
  // A classifier gives probabilities (softmax cross-entropy: per class; binary cross-entropy: the
  // sigmoid of each output); a regression model its raw outputs.
  Predictor predictor(model);
  return run_predictor(predictor, x);
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
