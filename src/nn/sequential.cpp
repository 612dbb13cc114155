// Sequential: layer bookkeeping over flat parameter/gradient buffers, and the summary table.
// Layers are known only through the Layer interface and the registry.
#include "anycl/nn/sequential.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <map>

#include "anycl/error.hpp"
#include "anycl/losses/loss.hpp"
#include "anycl/nn/batchnorm.hpp"
#include "anycl/nn/conv2d.hpp"
#include "anycl/nn/dense.hpp"
#include "anycl/nn/dropout.hpp"
#include "anycl/nn/flatten.hpp"
#include "anycl/nn/maxpool2d.hpp"
#include "anycl/profile.hpp"
#include "blas/gemm_prepare.hpp"

namespace anycl {
namespace {
std::string with_commas(size_t n) {
  std::string s = std::to_string(n);
  for (int i = int(s.size()) - 3; i > 0; i -= 3) s.insert(size_t(i), ",");
  return s;
}
}  // namespace

Sequential::Sequential(size_t input_features) : Sequential(Shape{input_features}) {}

Sequential::Sequential(const Shape& input_shape) : input_features_(0), input_shape_(input_shape) {
  if (input_shape.empty() || input_shape.size() > 3)
    throw ValidationError(fmt::format("a model's input shape must be (features) or (C, H, W), got {}",
                                      shape_string(input_shape)));
  for (size_t d : input_shape)
    if (d == 0) throw ValidationError("a model needs at least one input feature");
  input_features_ = shape_size(input_shape);
}

Sequential::Sequential(const ModelSpec& spec)
    : Sequential(spec.input_shape.empty() ? Shape{spec.input_features} : spec.input_shape) {
  if (input_features_ != spec.input_features && spec.input_features != 0)
    throw ValidationError(fmt::format("the input shape {} does not hold input_features = {}",
                                      shape_string(spec.input_shape), spec.input_features));
  for (const LayerSpec& l : spec.layers) add(l);
  set_loss(spec.loss);
}

Sequential& Sequential::dense(size_t units, Activation activation, Init init) {
  return add(std::make_unique<Dense>(units, activation, init));
}

Sequential& Sequential::dropout(float rate) { return add(std::make_unique<Dropout>(rate)); }

Sequential& Sequential::conv2d(size_t filters, size_t kernel, Activation activation, size_t stride,
                               bool same_padding) {
  return add(std::make_unique<Conv2D>(filters, kernel, stride, same_padding ? Padding::same : Padding::valid,
                                      activation));
}

Sequential& Sequential::max_pool2d(size_t size) { return add(std::make_unique<MaxPool2D>(size, size)); }

Sequential& Sequential::flatten() { return add(std::make_unique<Flatten>()); }

Sequential& Sequential::add(std::unique_ptr<Layer> layer) {
  if (built()) throw ValidationError("cannot add layers to a model that is already built");
  layers_.push_back(std::move(layer));
  return *this;
}

Sequential& Sequential::add(const LayerSpec& spec) { return add(make_layer(spec)); }

Sequential& Sequential::set_loss(const std::string& name) {
  check_loss_name(name);
  loss_ = name;
  return *this;
}

std::vector<Shape> Sequential::shapes() const {
  std::vector<Shape> s{input_shape_};
  for (const auto& l : layers_) s.push_back(l->output_shape(s.back()));
  return s;
}

size_t Sequential::parameter_count() const {
  const std::vector<Shape> in = shapes();
  size_t total = 0;
  for (size_t i = 0; i < layers_.size(); ++i)
    total = checked_add(total, layers_[i]->parameter_count(in[i]), "the model's parameter count");
  return total;
}

size_t Sequential::state_count() const {
  const std::vector<Shape> in = shapes();
  size_t total = 0;
  for (size_t i = 0; i < layers_.size(); ++i)
    total = checked_add(total, layers_[i]->state_count(in[i]), "the model's state count");
  return total;
}

size_t Sequential::weight_count() const {
  return checked_add(parameter_count(), state_count(), "the model's weight count");
}

std::vector<float> Sequential::download_weights() const {
  std::vector<float> out = params_.download();
  if (state_.size() > 0) {
    const std::vector<float> state = state_.download();
    out.insert(out.end(), state.begin(), state.end());
  }
  return out;
}

void Sequential::upload_weights(const std::vector<float>& weights) {
  const size_t n = params_.size();
  if (weights.size() != n + state_.size())
    throw ValidationError(fmt::format("{} weights for a model that holds {} parameters and {} state values",
                                      weights.size(), n, state_.size()));
  params_.upload(weights.data(), n);
  if (state_.size() > 0) state_.upload(weights.data() + n, state_.size());
}

size_t Sequential::output_features() const { return shape_size(shapes().back()); }

ModelSpec Sequential::spec() const {
  ModelSpec s;
  s.input_features = input_features_;
  if (input_shape_.size() > 1) s.input_shape = input_shape_;
  for (const auto& l : layers_) s.layers.push_back(l->spec());
  s.loss = loss_;
  return s;
}

Runtime& Sequential::runtime() const {
  if (!rt_) throw ValidationError("the model is not built: call build(runtime, max_batch) first");
  return *rt_;
}

void Sequential::check_memory(Runtime& rt, size_t max_batch) const {
  // Every buffer build() allocates, in floats: parameters and gradients, then each layer's
  // activations for max_batch rows. Saturating arithmetic so that an absurd batch reports a huge
  // figure instead of wrapping.
  const auto mul = [](size_t a, size_t b) { return b != 0 && a > SIZE_MAX / b ? SIZE_MAX : a * b; };
  const auto add = [](size_t a, size_t b) { return a > SIZE_MAX - b ? SIZE_MAX : a + b; };
  const std::vector<Shape> in = shapes();
  size_t floats = add(mul(parameter_count(), 2), state_count());
  for (size_t i = 0; i < layers_.size(); ++i)
    floats = add(add(floats, mul(max_batch, layers_[i]->activation_floats(in[i]))),
                 layers_[i]->scratch_floats(in[i], max_batch, rt));
  const size_t bytes = mul(floats, sizeof(float));
  if (bytes > rt.info().global_mem_bytes)
    throw ValidationError(fmt::format(
        "the model needs {} MiB of device memory for batches of {} rows, but '{}' has {} MiB — use a smaller "
        "batch (or smaller layers)",
        bytes >> 20, max_batch, rt.info().name, rt.info().global_mem_bytes >> 20));
}

void Sequential::build(Runtime& rt, size_t max_batch) {
  if (layers_.empty() || !layers_.back()->can_be_output())
    throw ValidationError("a model must end with a Dense layer (its outputs are the model's outputs)");
  if (max_batch == 0) throw ValidationError("the batch size must be at least 1");
  const size_t n = parameter_count();
  check_memory(rt, max_batch);
  detail::prepare_model_gemms(rt, *this, max_batch);  // before the layers read the GEMM planner's state
  params_ = Tensor(rt, {n});
  grads_ = Tensor(rt, {n});
  const std::vector<Shape> in = shapes();
  size_t offset = 0;
  for (size_t i = 0; i < layers_.size(); ++i) {
    const size_t count = layers_[i]->parameter_count(in[i]);
    layers_[i]->build(rt, in[i], max_batch, params_.rows(offset, count), grads_.rows(offset, count),
                      uint32_t(i));
    offset += count;
  }
  const size_t states = state_count();
  state_ = states > 0 ? Tensor(rt, {states}) : Tensor();
  for (size_t i = 0, at = 0; i < layers_.size(); ++i) {
    const size_t count = layers_[i]->state_count(in[i]);
    if (count > 0) layers_[i]->bind_state(state_.rows(at, count));
    at += count;
  }
  // A Dense followed by a Dropout: the Dense's output stage runs the mask too, forward and backward.
  for (size_t i = 0; i + 1 < layers_.size(); ++i) {
    auto* dense = dynamic_cast<Dense*>(layers_[i].get());
    auto* dropout = dynamic_cast<Dropout*>(layers_[i + 1].get());
    if (dense && dropout) {
      dense->dropout_after_ = dropout;
      dropout->fused_ = true;
    }
  }
  // A Conv2D followed by a MaxPool2D whose windows do not overlap: the convolution's output stage routes the
  // pool's gradient itself, in one pass (on CPU drivers: Conv2D::takes_pool_gradient), and backward()
  // skips the pool.
  // A BatchNormalization so followed likewise (BatchNormalization::takes_pool_gradient).
  for (auto& layer : layers_) {  // as unlinked first (a model built again, on another device)
    if (auto* conv = dynamic_cast<Conv2D*>(layer.get())) conv->pool_after_ = nullptr;
    if (auto* bn = dynamic_cast<BatchNormalization*>(layer.get())) bn->pool_after_ = nullptr;
    if (auto* pool = dynamic_cast<MaxPool2D*>(layer.get())) pool->fused_ = false;
  }
  for (size_t i = 0; i + 1 < layers_.size(); ++i) {
    auto* pool = dynamic_cast<MaxPool2D*>(layers_[i + 1].get());
    if (!pool) continue;
    if (auto* conv = dynamic_cast<Conv2D*>(layers_[i].get()); conv && conv->takes_pool_gradient(*pool)) {
      conv->pool_after_ = pool;
      pool->fused_ = true;
    }
    if (auto* bn = dynamic_cast<BatchNormalization*>(layers_[i].get());
        bn && bn->takes_pool_gradient(*pool)) {
      bn->pool_after_ = pool;
      pool->fused_ = true;
    }
  }
  rt_ = &rt;
  max_batch_ = max_batch;
}

void Sequential::initialize(uint64_t seed) {
  runtime();
  for (auto& l : layers_) l->initialize(seed);
}

Tensor Sequential::forward(const Tensor& x, const StepContext& ctx) {
  if (x.rows() > max_batch_)
    throw ValidationError(
        fmt::format("batch of {} rows exceeds the {} the model was built for", x.rows(), max_batch_));
  Tensor h = x;
  Profile* profile = rt_ ? rt_->profile() : nullptr;
  for (size_t i = 0; i < layers_.size(); ++i) {
    const ProfileLabel label(profile, [&] {
      return fmt::format("layer {} {} {}", i + 1, layers_[i]->type().name,
                         ctx.training ? "forward" : "infer");
    });
    auto* conv = dynamic_cast<Conv2D*>(layers_[i].get());
    if (conv && conv->pools_in_forward()) {  // the MaxPool2D after it too, in its output stage
      h = conv->forward_pooled(h, ctx);
      ++i;
      continue;
    }
    auto* bn = dynamic_cast<BatchNormalization*>(layers_[i].get());
    if (bn && bn->pools_in_forward()) {  // the MaxPool2D after it too, in one pass
      h = bn->forward_pooled(h, ctx);
      ++i;
      continue;
    }
    h = layers_[i]->forward(h, ctx);
  }
  return h;
}

void Sequential::backward(Tensor& dlogits, const StepContext& ctx,
                          const std::function<void(size_t)>& gradients_ready) {
  Tensor grad = dlogits;
  const std::vector<Shape> in = shapes();
  size_t ready = 0;
  Profile* profile = rt_ ? rt_->profile() : nullptr;
  for (size_t i = layers_.size(); i-- > 0;) {
    const ProfileLabel label(
        profile, [&] { return fmt::format("layer {} {} backward", i + 1, layers_[i]->type().name); });
    const auto* pool = dynamic_cast<const MaxPool2D*>(layers_[i].get());
    if (pool && pool->fused_)
      continue;  // the layer before it routes its gradient (Conv2D, BatchNormalization)
    grad = layers_[i]->backward(grad, ctx, /*need_dx=*/i > 0);
    if (layers_[i]->parameter_count(in[i]) > 0 && gradients_ready) gradients_ready(ready++);
  }
}

std::vector<std::pair<size_t, size_t>> Sequential::gradient_ranges() const {
  std::vector<std::pair<size_t, size_t>> ranges;
  const std::vector<Shape> in = shapes();
  size_t offset = 0;
  for (size_t i = 0; i < layers_.size(); ++i) {
    const size_t count = layers_[i]->parameter_count(in[i]);
    if (count > 0) ranges.emplace_back(offset, count);
    offset += count;
  }
  std::reverse(ranges.begin(), ranges.end());
  return ranges;
}

std::string Sequential::summary() const {
  const std::vector<Shape> in = shapes();
  std::map<std::string, size_t> seen;  // per type, as Keras numbers dense, dense_1, …
  std::vector<std::string> names;
  size_t width = 28;  // Keras' column; wider where a name and type need it (GlobalMaxPooling2D)
  for (const auto& layer : layers_) {
    const Layer& l = *layer;
    const size_t k = seen[l.type().name]++;
    std::string name = l.type().name;
    if (k > 0) name += "_" + std::to_string(k);
    std::string kind = l.kind();
    if (!l.summary_note().empty()) kind += ", " + l.summary_note();
    names.push_back(fmt::format("{} ({})", name, kind));
    width = std::max(width, names.back().size() + 1);
  }
  const size_t rule = width + 36;
  std::string out = fmt::format("{:<{}}{:<24}{:>12}\n", "Layer (type)", width, "Output Shape", "Param #");
  out += std::string(rule, '=') + "\n";
  for (size_t i = 0; i < layers_.size(); ++i)
    out += fmt::format("{:<{}}{:<24}{:>12}\n", names[i], width,
                       fmt::format("(None, {})", fmt::join(in[i + 1], ", ")),
                       with_commas(layers_[i]->parameter_count(in[i]) + layers_[i]->state_count(in[i])));
  out += std::string(rule, '=') + "\n";
  // As Keras: a layer's Param # and the total count its non-trainable weights (moving statistics) too.
  out += fmt::format("Total params: {}\nTrainable params: {}\nNon-trainable params: {}\n",
                     with_commas(weight_count()), with_commas(parameter_count()), with_commas(state_count()));
  return out;
}

}  // namespace anycl
