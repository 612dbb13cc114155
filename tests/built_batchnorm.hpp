// The BatchNorm tests' fixture: a BatchNormalization layer built alone on a runtime, with its own
// parameter, gradient and state tensors, and one training step's outputs for the bit-identical
// rerun checks. The form of its reductions is batchnorm_form.hpp's (set before building).
#pragma once

#include <anycl/nn/batchnorm.hpp>
#include <anycl/runtime.hpp>
#include <anycl/tensor.hpp>

#include <vector>

namespace anycl::test {

struct BuiltBatchNorm {
  BatchNormalization layer;
  Tensor params, grads, state;
  BuiltBatchNorm(Runtime& rt, const Shape& in, size_t batch, Activation act, float momentum = 0.9f,
                 float epsilon = 1e-3f)
      : layer(momentum, epsilon, act),
        params(rt, {2 * in[0]}),
        grads(rt, {2 * in[0]}),
        state(rt, {2 * in[0]}) {
    layer.build(rt, in, batch, params, grads, 0);
    layer.bind_state(state);
    layer.initialize(0);
  }

  // A training forward of x and the backward of dy (`shape`: the batch's): dx, y, the gradients
  // (dγ, dβ) and the moving statistics, one after the other.
  std::vector<float> training_step(Runtime& rt, const Shape& shape, const std::vector<float>& x,
                                   const std::vector<float>& dy) {
    StepContext train;
    train.training = true;
    const std::vector<float> y = layer.forward(Tensor::from_host(rt, shape, x), train).download();
    Tensor dyt = Tensor::from_host(rt, shape, dy);
    std::vector<float> all = layer.backward(dyt, train, true).download();
    for (const auto& part : {y, grads.download(), state.download()})
      all.insert(all.end(), part.begin(), part.end());
    return all;
  }
};

}  // namespace anycl::test
