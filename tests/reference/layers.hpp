// The host reference of every layer type, keyed by the registry's names (the same list as
// src/nn/registry.cpp; a test checks that every registered type has an entry here). Built from
// the per-kernel references: same parameter layout, initialisation streams and dropout masks.
#pragma once

#include <anycl/nn/avgpool2d.hpp>
#include <anycl/nn/batchnorm.hpp>
#include <anycl/nn/dense.hpp>
#include <anycl/nn/dropout.hpp>
#include <anycl/nn/flatten.hpp>
#include <anycl/nn/global_pool2d.hpp>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "reference/activation.hpp"
#include "reference/batchnorm.hpp"
#include "reference/conv.hpp"
#include "reference/dropout.hpp"
#include "reference/gemm.hpp"
#include "reference/init.hpp"
#include "reference/pool.hpp"

namespace anycl::reference {

/// What a step passes to a layer besides the data (as StepContext on the device).
struct HostStep {
  uint64_t seed = 0;
  uint32_t step = 0;
  uint32_t index = 0;  // the layer's position in the model
};

/// One layer on the host over (rows, in) → (rows, out) row-major floats.
class HostLayer {
 public:
  virtual ~HostLayer() = default;
  size_t in = 0, out = 0;
  virtual size_t parameter_count() const { return 0; }
  /// Fills this layer's parameters as Layer::initialize does.
  virtual void initialize(float* /*params*/, uint64_t /*seed*/, uint32_t /*index*/) const {}
  virtual std::vector<float> forward(const float* params, const std::vector<float>& x, size_t rows,
                                     const HostStep& s) const = 0;
  /// dy → dx; writes this layer's gradient slice.
  virtual std::vector<float> backward(const float* params, const std::vector<float>& x,
                                      const std::vector<float>& y, std::vector<float> dy, size_t rows,
                                      const HostStep& s, float* grads) const = 0;
};

class HostDense final : public HostLayer {
 public:
  HostDense(const Dense& d, size_t inputs) : act_(d.activation()), init_(d.init()) {
    in = inputs, out = d.units();
  }
  size_t parameter_count() const override { return in * out + out; }
  void initialize(float* params, uint64_t seed, uint32_t index) const override {
    uniform_init(params, in * out, reference::init_limit(init_, in, out), seed, index);
  }
  std::vector<float> forward(const float* p, const std::vector<float>& x, size_t rows,
                             const HostStep&) const override {
    std::vector<float> y(rows * out);
    gemm(false, false, rows, out, in, 1.f, x.data(), in, p, out, 0.f, y.data(), out);
    bias_activation_forward(y.data(), p + in * out, rows, out, act_);
    return y;
  }
  std::vector<float> backward(const float* p, const std::vector<float>& x, const std::vector<float>&,
                              std::vector<float> dy, size_t rows, const HostStep&, float* g) const override {
    std::vector<float> z(rows * out);  // the activation's input, formed again: z = x·W + b
    gemm(false, false, rows, out, in, 1.f, x.data(), in, p, out, 0.f, z.data(), out);
    bias_activation_forward(z.data(), p + in * out, rows, out, Activation::linear);
    bias_activation_backward(z.data(), dy.data(), g + in * out, rows, out, act_);
    gemm(true, false, in, out, rows, 1.f, x.data(), in, dy.data(), out, 0.f, g, out);
    std::vector<float> dx(rows * in);
    gemm(false, true, rows, in, out, 1.f, dy.data(), out, p, out, 0.f, dx.data(), in);
    return dx;
  }

 private:
  Activation act_;
  Init init_;
};

class HostDropout final : public HostLayer {
 public:
  HostDropout(const Dropout& d, size_t inputs) : rate_(d.rate()) { in = out = inputs; }
  std::vector<float> forward(const float*, const std::vector<float>& x, size_t rows,
                             const HostStep& s) const override {
    if (rate_ == 0.f) return x;
    std::vector<float> y(rows * out);
    dropout_forward(x.data(), y.data(), rows, out, mask(s));
    return y;
  }
  std::vector<float> backward(const float*, const std::vector<float>&, const std::vector<float>&,
                              std::vector<float> dy, size_t rows, const HostStep& s, float*) const override {
    if (rate_ > 0.f) dropout_backward(dy.data(), rows, out, mask(s));
    return dy;
  }

 private:
  DropoutMask mask(const HostStep& s) const {
    DropoutMask m;
    m.rate = rate_;
    m.seed = s.seed;
    m.step = s.step;
    m.stream = 0x10000 + s.index;
    return m;
  }
  float rate_;
};

class HostConv2D final : public HostLayer {
 public:
  HostConv2D(const Conv2D& c, const Shape& input)
      : g_(c.geometry(input)), filters_(c.filters()), act_(c.activation()), init_(c.init()) {
    in = shape_size(input), out = filters_ * g_.plane();
  }
  size_t parameter_count() const override { return filters_ * g_.patch() + filters_; }
  void initialize(float* params, uint64_t seed, uint32_t index) const override {
    const size_t kk = g_.kernel * g_.kernel;
    uniform_init(params, filters_ * g_.patch(), reference::init_limit(init_, g_.patch(), filters_ * kk), seed,
                 index);
  }
  std::vector<float> forward(const float* p, const std::vector<float>& x, size_t rows,
                             const HostStep&) const override {
    return conv2d_forward(g_, filters_, act_, p, x, rows);
  }
  std::vector<float> backward(const float* p, const std::vector<float>& x, const std::vector<float>& y,
                              std::vector<float> dy, size_t rows, const HostStep&, float* g) const override {
    return conv2d_backward(g_, filters_, act_, p, x, y, std::move(dy), rows, g);
  }

 private:
  ConvGeometry g_;
  size_t filters_;
  Activation act_;
  Init init_;
};

class HostMaxPool2D final : public HostLayer {
 public:
  HostMaxPool2D(const MaxPool2D& m, const Shape& input) : g_(m.geometry(input)) {
    in = shape_size(input), out = g_.channels * g_.out_h * g_.out_w;
  }
  std::vector<float> forward(const float*, const std::vector<float>& x, size_t rows,
                             const HostStep&) const override {
    return maxpool_forward(g_, x, rows);
  }
  std::vector<float> backward(const float*, const std::vector<float>& x, const std::vector<float>&,
                              std::vector<float> dy, size_t rows, const HostStep&, float*) const override {
    return maxpool_backward(g_, x, dy, rows);
  }

 private:
  PoolGeometry g_;
};

class HostAvgPool2D final : public HostLayer {
 public:
  HostAvgPool2D(const AvgPool2D& m, const Shape& input) : g_(m.geometry(input)) {
    in = shape_size(input), out = g_.channels * g_.out_h * g_.out_w;
  }
  std::vector<float> forward(const float*, const std::vector<float>& x, size_t rows,
                             const HostStep&) const override {
    return avgpool_forward(g_, x, rows);
  }
  std::vector<float> backward(const float*, const std::vector<float>&, const std::vector<float>&,
                              std::vector<float> dy, size_t rows, const HostStep&, float*) const override {
    return avgpool_backward(g_, dy, rows);
  }

 private:
  PoolGeometry g_;
};

class HostGlobalPool2D final : public HostLayer {
 public:
  HostGlobalPool2D(const GlobalPool2D& p, const Shape& input)
      : max_(p.is_max()), plane_(input.at(1) * input.at(2)) {
    in = shape_size(input), out = input.at(0);
  }
  std::vector<float> forward(const float*, const std::vector<float>& x, size_t rows,
                             const HostStep&) const override {
    return global_pool_forward(max_, x, rows * out, plane_);
  }
  std::vector<float> backward(const float*, const std::vector<float>& x, const std::vector<float>&,
                              std::vector<float> dy, size_t, const HostStep&, float*) const override {
    return global_pool_backward(max_, x, dy, plane_);
  }

 private:
  bool max_;
  size_t plane_;
};

class HostFlatten final : public HostLayer {
 public:
  explicit HostFlatten(const Shape& input) { in = out = shape_size(input); }
  std::vector<float> forward(const float*, const std::vector<float>& x, size_t,
                             const HostStep&) const override {
    return x;
  }
  std::vector<float> backward(const float*, const std::vector<float>&, const std::vector<float>&,
                              std::vector<float> dy, size_t, const HostStep&, float*) const override {
    return dy;
  }
};

/// BatchNormalization as a training step runs it (the batch's statistics; the moving ones are the
/// device's state, checked in tests/test_batchnorm.cpp). Parameters γ then β, initialised 1 and 0.
class HostBatchNorm final : public HostLayer {
 public:
  HostBatchNorm(const BatchNormalization& b, const Shape& input)
      : channels_(input.at(0)),
        plane_(shape_size(input) / input.at(0)),
        epsilon_(b.epsilon()),
        act_(b.activation()) {
    in = out = shape_size(input);
  }
  size_t parameter_count() const override { return 2 * channels_; }
  void initialize(float* params, uint64_t, uint32_t) const override {
    for (size_t c = 0; c < channels_; ++c) params[c] = 1.f, params[channels_ + c] = 0.f;
  }
  std::vector<float> forward(const float* p, const std::vector<float>& x, size_t rows,
                             const HostStep&) const override {
    const BatchNormStats st = batchnorm_stats(x, rows, channels_, plane_);
    return batchnorm_forward(p, x, rows, channels_, plane_, st.mean, st.var, epsilon_, act_);
  }
  std::vector<float> backward(const float* p, const std::vector<float>& x, const std::vector<float>&,
                              std::vector<float> dy, size_t rows, const HostStep&, float* g) const override {
    return batchnorm_backward(p, x, dy, rows, channels_, plane_, epsilon_, g, act_);
  }

 private:
  size_t channels_, plane_;
  float epsilon_;
  Activation act_;
};

/// A host layer for a library layer with per-sample input shape `input`.
using HostFactory = std::unique_ptr<HostLayer> (*)(const Layer& layer, const Shape& input);

/// Registry name → host reference factory.
inline const std::map<std::string, HostFactory>& host_layers() {
  static const std::map<std::string, HostFactory> table{
      {"dense",
       [](const Layer& l, const Shape& in) -> std::unique_ptr<HostLayer> {
         return std::make_unique<HostDense>(static_cast<const Dense&>(l), shape_size(in));
       }},
      {"dropout",
       [](const Layer& l, const Shape& in) -> std::unique_ptr<HostLayer> {
         return std::make_unique<HostDropout>(static_cast<const Dropout&>(l), shape_size(in));
       }},
      {"conv2d",
       [](const Layer& l, const Shape& in) -> std::unique_ptr<HostLayer> {
         return std::make_unique<HostConv2D>(static_cast<const Conv2D&>(l), in);
       }},
      {"maxpool2d",
       [](const Layer& l, const Shape& in) -> std::unique_ptr<HostLayer> {
         return std::make_unique<HostMaxPool2D>(static_cast<const MaxPool2D&>(l), in);
       }},
      {"flatten",
       [](const Layer&, const Shape& in) -> std::unique_ptr<HostLayer> {
         return std::make_unique<HostFlatten>(in);
       }},
      {"avgpool2d",
       [](const Layer& l, const Shape& in) -> std::unique_ptr<HostLayer> {
         return std::make_unique<HostAvgPool2D>(static_cast<const AvgPool2D&>(l), in);
       }},
      {"globalavgpool2d",
       [](const Layer& l, const Shape& in) -> std::unique_ptr<HostLayer> {
         return std::make_unique<HostGlobalPool2D>(static_cast<const GlobalPool2D&>(l), in);
       }},
      {"globalmaxpool2d",
       [](const Layer& l, const Shape& in) -> std::unique_ptr<HostLayer> {
         return std::make_unique<HostGlobalPool2D>(static_cast<const GlobalPool2D&>(l), in);
       }},
      {"batchnorm",
       [](const Layer& l, const Shape& in) -> std::unique_ptr<HostLayer> {
         return std::make_unique<HostBatchNorm>(static_cast<const BatchNormalization&>(l), in);
       }},
  };
  return table;
}

}  // namespace anycl::reference
