// Evaluation over resident data: gather → forward (dropout off) → loss/accuracy slots, or
// → the loss's probabilities → download for predictions.
#include "anycl/train/evaluator.hpp"

#include <fmt/format.h>

#include <numeric>

#include "anycl/error.hpp"
#include "anycl/losses/loss.hpp"
#include "gather_source.hpp"
#include "ops/gather.hpp"

namespace anycl {

std::vector<float> read_metric_slots(Runtime& /*rt*/, const DeviceBuffer& metrics, size_t slots) {
  std::vector<float> values(slots * 2);
  if (!values.empty()) metrics.read(values.data(), values.size() * sizeof(float));
  return values;
}

std::pair<double, double> read_metric_sums(Runtime& rt, const DeviceBuffer& metrics, size_t slots) {
  const std::vector<float> values = read_metric_slots(rt, metrics, slots);
  double loss = 0, correct = 0;
  for (size_t s = 0; s < slots; ++s) loss += values[2 * s], correct += values[2 * s + 1];
  return {loss, correct};
}

Evaluator::Evaluator(Sequential& model, size_t batch)
    : model_(model),
      batch_(std::min(batch, model.max_batch())),
      rt_(model.runtime()),
      gather_(std::make_unique<GatherBatch>(rt_)),
      loss_(make_loss(rt_, model.loss())) {
  if (batch_ == 0) throw ValidationError("evaluation batch must be at least 1");
  // Every model is scored by its own loss and that loss's metric: accuracy (softmax or binary
  // cross-entropy) or the MAE (the regression losses).
  x_ = Tensor(rt_, {batch_, model.input_features()});
  probs_ = Tensor(rt_, {batch_, model.output_features()});
  labels_ =
      DeviceBuffer(rt_, batch_ * loss_->target_width(model.output_features()) * 4, "evaluation targets");
}

Evaluator::~Evaluator() = default;

void Evaluator::check(const DeviceDataset& data) const {
  const bool class_targets = loss_->target_dtype() == DType::i32;
  if (!class_targets && data.has_classes())
    throw ValidationError(fmt::format(
        "this model is trained with the {} loss, which takes float targets ({} per sample), but the data "
        "has class labels — evaluate it on float targets{}",
        model_.loss(), model_.output_features(),
        model_.loss() == "binary_crossentropy" ? " (0 or 1 for each output)" : ""));
  if (class_targets && !data.has_classes())
    throw ValidationError(
        "this is a classifier but the data has float targets — evaluate it on class labels (integers "
        "0 .. classes-1), or build a regression model (loss mse) for float targets");
  if (!class_targets && data.target_width() != model_.output_features())
    throw ValidationError(fmt::format("the data has {} targets per sample but the model has {} outputs",
                                      data.target_width(), model_.output_features()));
  if (data.features() != model_.input_features())
    throw ValidationError(
        fmt::format("the model takes {} input features but the data has {} — use data of the "
                    "shape the model was trained on",
                    model_.input_features(), data.features()));
  if (data.num_classes() > model_.output_features())
    throw ValidationError(fmt::format("the data has {} classes but the model has {} outputs",
                                      data.num_classes(), model_.output_features()));
}

const DeviceBuffer& Evaluator::identity_order(size_t count) {
  if (order_count_ != count) {
    std::vector<uint32_t> identity(count);
    std::iota(identity.begin(), identity.end(), 0u);
    order_ =
        DeviceBuffer(rt_, count * sizeof(cl_uint), "evaluation order", count ? identity.data() : nullptr);
    order_count_ = count;
  }
  return order_;
}

EvalStats Evaluator::evaluate(const DeviceDataset& data) {
  check(data);
  const size_t steps = (data.count() + batch_ - 1) / batch_;
  if (!metrics_ || metrics_.bytes() < steps * 2 * sizeof(float))
    metrics_ = DeviceBuffer(rt_, steps * 2 * sizeof(float), "evaluation metric slots");
  const DeviceBuffer& order = identity_order(data.count());
  const StepContext ctx;  // training = false: dropout is the identity
  for (size_t s = 0; s < steps; ++s) {
    const size_t first = s * batch_, rows = std::min(batch_, data.count() - first);
    Tensor x = x_.rows(0, rows);
    gather_->run(detail::gather_source(data), order, first, x, labels_);
    loss_->run(model_.forward(x, ctx), {&labels_, 0}, nullptr, 0.f, metrics_, s);
  }
  const auto [loss, metric] = read_metric_sums(rt_, metrics_, steps);
  const double n = double(data.count());
  // `accuracy` is the loss's metric, as training reports it (EpochStats::train_accuracy): the MAE for MSE.
  EvalStats stats{loss / n, metric / n, data.count()};
  if (loss_->metric_name() == "mae") stats.mae = metric / n;
  return stats;
}

std::vector<float> Evaluator::probabilities(const DeviceDataset& data, size_t first, size_t count) {
  if (!loss_->predicts_classes())
    throw ValidationError("a regression model has no class probabilities — predict its outputs instead");
  check(data);
  if (first + count > data.count())
    throw ValidationError(
        fmt::format("samples [{}, {}) requested from a set of {}", first, first + count, data.count()));
  const DeviceBuffer& order = identity_order(data.count());
  std::vector<float> out;
  out.reserve(count * model_.output_features());
  const StepContext ctx;
  for (size_t done = 0; done < count; done += batch_) {
    const size_t rows = std::min(batch_, count - done);
    Tensor x = x_.rows(0, rows), probs = probs_.rows(0, rows);
    gather_->run(detail::gather_source(data), order, first + done, x, labels_);
    loss_->predictions(model_.forward(x, ctx), probs);
    const std::vector<float> part = probs.download();
    out.insert(out.end(), part.begin(), part.end());
  }
  return out;
}

}  // namespace anycl
