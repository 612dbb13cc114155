// A whole MLP on the host, built from the per-kernel references: what anycl's Sequential +
// Trainer must reproduce step by step (the golden-trajectory test). Same parameter layout,
// same counter-based initialisation and dropout masks, same batch order.
#pragma once

#include <anycl/nn/sequential.hpp>

#include <vector>

#include "reference/activation.hpp"
#include "reference/dropout.hpp"
#include "reference/gemm.hpp"
#include "reference/init.hpp"
#include "reference/optimizer.hpp"
#include "reference/softmax_xent.hpp"

namespace anycl::reference {

class Mlp {
 public:
  Mlp(const ModelSpec& spec, uint64_t seed) : spec_(spec) {
    size_t in = spec.input_features;
    for (const auto& l : spec.layers) {
      Slot s{in, l.kind == LayerSpec::Kind::dense ? l.units : in, params_.size()};
      if (l.kind == LayerSpec::Kind::dense) params_.resize(params_.size() + in * l.units + l.units, 0.f);
      slots_.push_back(s);
      in = s.out;
    }
    for (size_t i = 0; i < slots_.size(); ++i)
      if (spec.layers[i].kind == LayerSpec::Kind::dense)
        uniform_init(&params_[slots_[i].offset], slots_[i].in * slots_[i].out,
                     reference::init_limit(spec.layers[i].init, slots_[i].in, slots_[i].out), seed,
                     uint32_t(i));
  }

  /// One training step on x:(rows,in) with labels; returns the summed loss (as the device's
  /// metrics slot holds it). Updates the parameters through `opt`.
  double train_step(const std::vector<float>& x, const std::vector<int>& labels, size_t rows, uint64_t seed,
                    uint32_t step, Optimizer& opt) {
    std::vector<std::vector<float>> acts{x};  // acts[i] = input of layer i
    for (size_t i = 0; i < slots_.size(); ++i) acts.push_back(forward(i, acts.back(), rows, seed, step));
    const size_t classes = slots_.back().out;
    std::vector<float> grad(rows * classes);
    const double loss =
        softmax_xent(acts.back().data(), labels.data(), rows, classes, 1.0 / double(rows), grad.data())
            .loss_sum;
    std::vector<float> grads(params_.size(), 0.f);
    for (size_t i = slots_.size(); i-- > 0;)
      grad = backward(i, acts[i], acts[i + 1], grad, rows, seed, step, grads);
    opt.step(params_, grads);
    return loss;
  }

  const std::vector<float>& parameters() const { return params_; }

 private:
  struct Slot {
    size_t in, out, offset;
  };

  DropoutMask mask(size_t i, uint64_t seed, uint32_t step) const {
    DropoutMask m;
    m.rate = spec_.layers[i].rate;
    m.seed = seed;
    m.step = step;
    m.stream = 0x10000 + uint32_t(i);
    return m;
  }

  // x:(rows,in) → y:(rows,out)
  std::vector<float> forward(size_t i, const std::vector<float>& x, size_t rows, uint64_t seed,
                             uint32_t step) {
    const Slot& s = slots_[i];
    const LayerSpec& l = spec_.layers[i];
    std::vector<float> y(rows * s.out);
    if (l.kind == LayerSpec::Kind::dropout) {
      if (l.rate == 0.f) return x;
      dropout_forward(x.data(), y.data(), rows, s.out, mask(i, seed, step));
      return y;
    }
    gemm(false, false, rows, s.out, s.in, 1.f, x.data(), s.in, &params_[s.offset], s.out, 0.f, y.data(),
         s.out);
    bias_activation_forward(y.data(), &params_[s.offset + s.in * s.out], rows, s.out, l.activation);
    return y;
  }

  // dy:(rows,out) → dx:(rows,in); writes the layer's slice of grads.
  std::vector<float> backward(size_t i, const std::vector<float>& x, const std::vector<float>& y,
                              std::vector<float> dy, size_t rows, uint64_t seed, uint32_t step,
                              std::vector<float>& grads) {
    const Slot& s = slots_[i];
    const LayerSpec& l = spec_.layers[i];
    if (l.kind == LayerSpec::Kind::dropout) {
      if (l.rate > 0.f) dropout_backward(dy.data(), rows, s.out, mask(i, seed, step));
      return dy;
    }
    bias_activation_backward(y.data(), dy.data(), &grads[s.offset + s.in * s.out], rows, s.out, l.activation);
    gemm(true, false, s.in, s.out, rows, 1.f, x.data(), s.in, dy.data(), s.out, 0.f, &grads[s.offset], s.out);
    std::vector<float> dx(rows * s.in);
    gemm(false, true, rows, s.in, s.out, 1.f, dy.data(), s.out, &params_[s.offset], s.out, 0.f, dx.data(),
         s.in);
    return dx;
  }

  ModelSpec spec_;
  std::vector<Slot> slots_;
  std::vector<float> params_;
};

}  // namespace anycl::reference
