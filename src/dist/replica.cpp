// A data-parallel replica: shard gather → forward → loss → backward, gradient exchange through
// host memory, and the optimizer update.
#include "anycl/dist/replica.hpp"

#include <fmt/format.h>

#include "anycl/error.hpp"
#include "anycl/profile.hpp"
#include "anycl/train/evaluator.hpp"
#include "ops/gather.hpp"
#include "train/gather_source.hpp"

namespace anycl {

Replica::Replica(Runtime& rt, const ModelSpec& spec, const OptimizerConfig& optimizer, size_t max_rows,
                 uint64_t seed)
    : rt_(rt),
      owned_model_(std::make_unique<Sequential>(spec)),
      seed_(seed),
      gather_(std::make_unique<GatherBatch>(rt)) {
  model_ = owned_model_.get();
  model_->build(rt, max_rows);
  model_->initialize(seed);
  owned_optimizer_ = make_optimizer(rt, model_->parameter_count(), optimizer);
  optimizer_ = owned_optimizer_.get();
  allocate(max_rows);
}

Replica::Replica(Sequential& model, Optimizer& optimizer, size_t max_rows, uint64_t seed)
    : rt_(model.runtime()),
      model_(&model),
      optimizer_(&optimizer),
      seed_(seed),
      gather_(std::make_unique<GatherBatch>(rt_)) {
  if (max_rows == 0 || max_rows > model.max_batch())
    throw ValidationError(fmt::format("batch {} must be in [1, {}] (the size the model was built for)",
                                      max_rows, model.max_batch()));
  allocate(max_rows);
}

void Replica::allocate(size_t max_rows) {
  Runtime& rt = rt_;
  loss_ = make_loss(rt, model_->loss());
  x_ = Tensor(rt, {max_rows, model_->input_features()});
  dlogits_ = Tensor(rt, {max_rows, model_->output_features()});
  // Targets: a class index (int32) or the loss's width of floats per row, 4 bytes each.
  labels_ = DeviceBuffer(rt, max_rows * loss_->target_width(model_->output_features()) * 4, "batch targets");
  ranges_ = model_->gradient_ranges();
  staging_.assign(ranges_.size(), nullptr);
}

Replica::~Replica() {
  for (cl_event& e : staging_)
    if (e) clWaitForEvents(1, &e), clReleaseEvent(e);
}

void Replica::stage(size_t c) {
  if (staging_[c]) wait_gradients(c);  // a copy from an earlier step still in flight
  if (staged_.empty()) staged_.resize(model_->parameter_count());  // first use: several replicas
  const auto [offset, count] = ranges_[c];
  const Tensor& grads = model_->gradients();
  staging_[c] = grads.buffer().read_async(staged_.data() + offset, count * sizeof(float),
                                          (grads.offset() + offset) * sizeof(float));
}

const float* Replica::wait_gradients(size_t c) {
  cl_event& e = staging_.at(c);
  if (e) {
    ++rt_.counters().host_waits;
    const cl_int status = clWaitForEvents(1, &e);
    clReleaseEvent(e);
    e = nullptr;
    detail::check_cl(status, "clWaitForEvents", "gradient copy to the host");
  }
  return staged_.data() + ranges_[c].first;
}

void Replica::set_train_data(const data::Dataset& train) {
  owned_train_ = std::make_unique<DeviceDataset>(rt_, train);
  use_train_data(*owned_train_);
}

void Replica::use_train_data(const DeviceDataset& train) {
  // The data's targets must be what the model's loss consumes: class indices for softmax
  // cross-entropy, float rows of the output width for the others (regression, binary cross-entropy).
  const size_t outputs = model_->output_features();
  if (train.has_classes() != (loss_->target_dtype() == DType::i32))
    throw ValidationError(fmt::format(
        "the model is trained with {} but the data set has {} — {}", loss_->name(),
        train.has_classes() ? "class labels" : "float targets",
        train.has_classes() ? "use softmax_cross_entropy for class labels (the default)"
                            : "float targets need a loss that takes them: mse, mae or huber for regression, "
                              "binary_crossentropy for 0/1 targets (Sequential::set_loss(\"mse\"))"));
  if (!train.has_classes() && train.target_width() != loss_->target_width(outputs))
    throw ValidationError(fmt::format("the data set has {} targets per sample but the model has {} outputs",
                                      train.target_width(), outputs));
  train_ = &train;
  if (!order_ || order_.bytes() < train.count() * sizeof(cl_uint))
    order_ = DeviceBuffer(rt_, train.count() * sizeof(cl_uint), "sample order");
}

const DeviceDataset& Replica::train_data() const {
  if (!train_) throw ValidationError("replica has no training data: call set_train_data first");
  return *train_;
}

void Replica::reserve_slots(size_t slots) {
  if (!metrics_ || metrics_.bytes() < slots * 2 * sizeof(float))
    metrics_ = DeviceBuffer(rt_, slots * 2 * sizeof(float), "metric slots");
}

void Replica::set_epoch_order(const std::vector<uint32_t>& order, bool blocking) {
  train_data();  // ValidationError before set_train_data
  if (order.empty()) throw ValidationError("an empty sample order");
  if (!order_ || order_.bytes() < order.size() * sizeof(cl_uint))
    order_ = DeviceBuffer(rt_, order.size() * sizeof(cl_uint), "sample order");
  order_.write(order.data(), order.size() * sizeof(cl_uint), 0, blocking);
}

void Replica::compute_gradients(size_t first, size_t lo, size_t hi, size_t global_rows, uint32_t step,
                                size_t slot, bool stage) {
  const size_t rows = hi - lo;
  last_rows_ = rows;
  if (rows == 0) {  // an empty shard contributes nothing: zero gradients and metrics
    model_->gradients().fill(0.f);
    for (size_t c = 0; stage && c < ranges_.size(); ++c) this->stage(c);
    const float zeros[2] = {0.f, 0.f};
    metrics_.write(zeros, sizeof(zeros), slot * sizeof(zeros));
    return;
  }
  Tensor x = x_.rows(0, rows), dlogits = dlogits_.rows(0, rows);
  Profile* profile = rt_.profile();
  {
    const ProfileLabel label(profile, [] { return std::string("batch"); });
    gather_->run(detail::gather_source(train_data()), order_, first + lo, x, labels_);
  }
  StepContext ctx;
  ctx.training = true;
  ctx.seed = seed_;
  ctx.step = step;
  ctx.row_base = uint32_t(lo);
  const Tensor logits = model_->forward(x, ctx);
  {
    const ProfileLabel label(profile, [&] { return "loss " + loss_->name(); });
    loss_->run(logits, {&labels_, 0}, &dlogits, 1.0f / float(global_rows), metrics_, slot);
  }
  if (stage)
    model_->backward(dlogits, ctx, [this](size_t c) { this->stage(c); });
  else
    model_->backward(dlogits, ctx);
}

std::pair<double, double> Replica::probe_last_batch() {
  if (last_rows_ == 0) return {0.0, 0.0};
  if (!probe_) probe_ = DeviceBuffer(rt_, 2 * sizeof(float), "health probe slot");
  const Tensor logits = model_->forward(x_.rows(0, last_rows_), StepContext{});
  loss_->run(logits, {&labels_, 0}, nullptr, 1.0f, probe_, 0);
  const std::vector<float> slot = read_metric_slots(rt_, probe_, 1);
  return {double(slot[0]), double(last_rows_)};
}

void Replica::read_gradients(std::vector<float>& host) {
  for (size_t c = 0; c < ranges_.size(); ++c) wait_gradients(c);
  host = staged_;
}

void Replica::write_gradients(const std::vector<float>& host) { model_->gradients().upload(host); }

void Replica::apply_update() {
  const ProfileLabel label(rt_.profile(), [&] { return "optimizer " + optimizer_->name(); });
  optimizer_->step(model_->parameters(), model_->gradients());
}

std::pair<double, double> Replica::metric_sums(size_t slots) {
  return read_metric_sums(rt_, metrics_, slots);
}

std::vector<float> Replica::metric_slots(size_t slots) { return read_metric_slots(rt_, metrics_, slots); }

void Replica::set_metric_slots(const std::vector<float>& values) {
  if (values.empty()) return;
  if (!metrics_ || metrics_.bytes() < values.size() * sizeof(float))
    throw ValidationError(fmt::format("{} metric values for {} bytes of slots: call reserve_slots first",
                                      values.size(), metrics_ ? metrics_.bytes() : 0));
  metrics_.write(values.data(), values.size() * sizeof(float));
}

}  // namespace anycl
