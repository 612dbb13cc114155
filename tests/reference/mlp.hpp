// A whole MLP on the host, built from the per-kernel references: what anycl's Sequential +
// Trainer must reproduce step by step (the golden-trajectory test). Same parameter layout,
// same counter-based initialisation and dropout masks, same batch order.
#pragma once

#include <anycl/nn/sequential.hpp>

#include <vector>

#include "reference/layers.hpp"
#include "reference/optimizer.hpp"
#include "reference/softmax_xent.hpp"

namespace anycl::reference {

class Mlp {
 public:
  Mlp(const ModelSpec& spec, uint64_t seed) {
    const Sequential model(spec);  // the library's layers, for their configuration
    Shape in = model.input_shape();
    for (const auto& l : model.layers()) {
      layers_.push_back(host_layers().at(l->type().name)(*l, in));
      offsets_.push_back(params_.size());
      params_.resize(params_.size() + layers_.back()->parameter_count(), 0.f);
      in = l->output_shape(in);
    }
    for (size_t i = 0; i < layers_.size(); ++i)
      layers_[i]->initialize(&params_[offsets_[i]], seed, uint32_t(i));
  }

  /// One training step on x:(rows,in) with labels; returns the summed loss (as the device's
  /// metrics slot holds it). Updates the parameters through `opt`.
  double train_step(const std::vector<float>& x, const std::vector<int>& labels, size_t rows, uint64_t seed,
                    uint32_t step, Optimizer& opt) {
    std::vector<std::vector<float>> acts{x};  // acts[i] = input of layer i
    for (size_t i = 0; i < layers_.size(); ++i)
      acts.push_back(
          layers_[i]->forward(&params_[offsets_[i]], acts.back(), rows, {seed, step, uint32_t(i)}));
    const size_t classes = layers_.back()->out;
    std::vector<float> grad(rows * classes);
    const double loss =
        softmax_xent(acts.back().data(), labels.data(), rows, classes, 1.0 / double(rows), grad.data())
            .loss_sum;
    std::vector<float> grads(params_.size(), 0.f);
    for (size_t i = layers_.size(); i-- > 0;)
      grad = layers_[i]->backward(&params_[offsets_[i]], acts[i], acts[i + 1], grad, rows,
                                  {seed, step, uint32_t(i)}, &grads[offsets_[i]]);
    opt.step(params_, grads);
    return loss;
  }

  const std::vector<float>& parameters() const { return params_; }

 private:
  std::vector<std::unique_ptr<HostLayer>> layers_;
  std::vector<size_t> offsets_;
  std::vector<float> params_;
};

}  // namespace anycl::reference
