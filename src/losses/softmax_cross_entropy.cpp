// SoftmaxCrossEntropyLoss over the fused softmax_xent op (src/ops/softmax_xent.cpp).
#include "anycl/losses/softmax_cross_entropy.hpp"

#include "ops/softmax_xent.hpp"

namespace anycl {

SoftmaxCrossEntropyLoss::SoftmaxCrossEntropyLoss(Runtime& rt)
    : op_(std::make_unique<SoftmaxCrossEntropy>(rt)) {}

SoftmaxCrossEntropyLoss::~SoftmaxCrossEntropyLoss() = default;

void SoftmaxCrossEntropyLoss::run(const Tensor& outputs, TargetsView targets, Tensor* grad, float grad_scale,
                                  DeviceBuffer& metrics, size_t slot) {
  op_->run(outputs, targets, grad, grad_scale, metrics, slot);
}

void SoftmaxCrossEntropyLoss::probabilities(const Tensor& logits, Tensor& probs) {
  op_->probabilities(logits, probs);
}

}  // namespace anycl
