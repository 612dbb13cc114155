// Sequential: layer bookkeeping over flat parameter/gradient buffers, and the summary table.
#include "anycl/nn/sequential.hpp"

#include <fmt/format.h>

#include <algorithm>

#include <cstdint>

#include "anycl/error.hpp"
#include "anycl/nn/dense.hpp"
#include "anycl/nn/dropout.hpp"

namespace anycl {
namespace {
std::string with_commas(size_t n) {
  std::string s = std::to_string(n);
  for (int i = int(s.size()) - 3; i > 0; i -= 3) s.insert(size_t(i), ",");
  return s;
}
}  // namespace

Sequential::Sequential(size_t input_features) : input_features_(input_features) {
  if (input_features == 0) throw ValidationError("a model needs at least one input feature");
}

Sequential::Sequential(const ModelSpec& spec) : Sequential(spec.input_features) {
  for (const LayerSpec& l : spec.layers) {
    if (l.kind == LayerSpec::Kind::dense)
      dense(l.units, l.activation, l.init);
    else
      dropout(l.rate);
  }
}

Sequential& Sequential::dense(size_t units, Activation activation, Init init) {
  return add(std::make_unique<Dense>(units, activation, init));
}

Sequential& Sequential::dropout(float rate) { return add(std::make_unique<Dropout>(rate)); }

Sequential& Sequential::add(std::unique_ptr<Layer> layer) {
  if (built()) throw ValidationError("cannot add layers to a model that is already built");
  layers_.push_back(std::move(layer));
  return *this;
}

size_t Sequential::parameter_count() const {
  size_t total = 0, in = input_features_;
  for (const auto& l : layers_) total += l->parameter_count(in), in = l->output_features(in);
  return total;
}

size_t Sequential::output_features() const {
  size_t in = input_features_;
  for (const auto& l : layers_) in = l->output_features(in);
  return in;
}

ModelSpec Sequential::spec() const {
  ModelSpec s;
  s.input_features = input_features_;
  for (const auto& l : layers_) s.layers.push_back(l->spec());
  return s;
}

Runtime& Sequential::runtime() const {
  if (!rt_) throw ValidationError("the model is not built: call build(runtime, max_batch) first");
  return *rt_;
}

void Sequential::check_memory(Runtime& rt, size_t max_batch) const {
  // Every buffer build() allocates, in floats: parameters and gradients, then per layer its output
  // and input-gradient (Dense) or mask output (Dropout) for max_batch rows. Saturating arithmetic
  // so that an absurd batch reports a huge figure instead of wrapping.
  const auto mul = [](size_t a, size_t b) { return b != 0 && a > SIZE_MAX / b ? SIZE_MAX : a * b; };
  const auto add = [](size_t a, size_t b) { return a > SIZE_MAX - b ? SIZE_MAX : a + b; };
  size_t floats = mul(parameter_count(), 2), in = input_features_;
  for (const auto& l : layers_) {
    const size_t out = l->output_features(in);
    if (l->kind() == "Dense")
      floats = add(floats, mul(max_batch, add(in, out)));
    else
      floats = add(floats, mul(max_batch, out));
    in = out;
  }
  const size_t bytes = mul(floats, sizeof(float));
  if (bytes > rt.info().global_mem_bytes)
    throw ValidationError(fmt::format(
        "the model needs {} MiB of device memory for batches of {} rows, but '{}' has {} MiB — use a smaller "
        "batch (or smaller layers)",
        bytes >> 20, max_batch, rt.info().name, rt.info().global_mem_bytes >> 20));
}

void Sequential::build(Runtime& rt, size_t max_batch) {
  if (layers_.empty() || layers_.back()->kind() != "Dense")
    throw ValidationError("a model must end with a Dense layer (its outputs are the class logits)");
  if (max_batch == 0) throw ValidationError("the batch size must be at least 1");
  const size_t n = parameter_count();
  check_memory(rt, max_batch);
  params_ = Tensor(rt, {n});
  grads_ = Tensor(rt, {n});
  size_t offset = 0, in = input_features_;
  for (size_t i = 0; i < layers_.size(); ++i) {
    const size_t count = layers_[i]->parameter_count(in);
    layers_[i]->build(rt, in, max_batch, params_.rows(offset, count), grads_.rows(offset, count),
                      uint32_t(i));
    offset += count;
    in = layers_[i]->output_features(in);
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
  for (auto& l : layers_) h = l->forward(h, ctx);
  return h;
}

void Sequential::backward(Tensor& dlogits, const StepContext& ctx,
                          const std::function<void(size_t)>& gradients_ready) {
  Tensor grad = dlogits;
  size_t in = input_features_, ready = 0;
  std::vector<size_t> counts;  // parameters per layer
  for (const auto& l : layers_) counts.push_back(l->parameter_count(in)), in = l->output_features(in);
  for (size_t i = layers_.size(); i-- > 0;) {
    grad = layers_[i]->backward(grad, ctx, /*need_dx=*/i > 0);
    if (counts[i] > 0 && gradients_ready) gradients_ready(ready++);
  }
}

std::vector<std::pair<size_t, size_t>> Sequential::gradient_ranges() const {
  std::vector<std::pair<size_t, size_t>> ranges;
  size_t offset = 0, in = input_features_;
  for (const auto& l : layers_) {
    const size_t count = l->parameter_count(in);
    if (count > 0) ranges.emplace_back(offset, count);
    offset += count;
    in = l->output_features(in);
  }
  std::reverse(ranges.begin(), ranges.end());
  return ranges;
}

std::string Sequential::summary() const {
  std::string out = fmt::format("{:<28}{:<24}{:>12}\n", "Layer (type)", "Output Shape", "Param #");
  out += std::string(64, '=') + "\n";
  size_t in = input_features_, dense_n = 0, dropout_n = 0;
  for (const auto& l : layers_) {
    const bool is_dense = l->kind() == "Dense";
    const size_t k = is_dense ? dense_n++ : dropout_n++;
    std::string name = is_dense ? "dense" : "dropout";
    if (k > 0) name += "_" + std::to_string(k);
    std::string kind = l->kind();
    if (is_dense && l->spec().activation != Activation::linear)
      kind += fmt::format(", {}", to_string(l->spec().activation));
    out +=
        fmt::format("{:<28}{:<24}{:>12}\n", fmt::format("{} ({})", name, kind),
                    fmt::format("(None, {})", l->output_features(in)), with_commas(l->parameter_count(in)));
    in = l->output_features(in);
  }
  out += std::string(64, '=') + "\n";
  out += fmt::format("Total params: {}\nTrainable params: {}\nNon-trainable params: 0\n",
                     with_commas(parameter_count()), with_commas(parameter_count()));
  return out;
}

}  // namespace anycl
