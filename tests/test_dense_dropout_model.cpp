// A model's Dense layer with a Dropout after it runs both output stages in one launch each way
// (Sequential::build links them): a training step gives the outputs, masks and gradients of a host
// computation of dense → dropout, and evaluation the Dense's own stage.
#include <doctest/doctest.h>
#include <anycl/nn/sequential.hpp>

#include <algorithm>

#include "helpers.hpp"
#include "ops/dropout.hpp"
#include "reference/dropout.hpp"

using anycl::Activation;
using anycl::DropoutMask;

// In a model: dense(relu) → dropout → dense. The fused stages give, for a training step, the first
// layer's dropped output and its gradients as a host computation from the downloaded weights.
TEST_CASE("a Dense layer followed by Dropout trains through the fused stages as dense then dropout") {
  auto& rt = anycl::test::runtime();
  constexpr size_t kIn = 37, kHidden = 67, kOut = 5, kRows = 19;
  anycl::Sequential model(kIn);
  model.dense(kHidden, Activation::relu).dropout(0.4f).dense(kOut);
  model.build(rt, kRows);
  model.initialize(77);
  const auto x_host = anycl::test::random_floats(kRows * kIn, -1.f, 1.f, 5);
  const auto x = anycl::Tensor::from_host(rt, {kRows, kIn}, x_host);
  const anycl::StepContext ctx{true, 1234, 6, 11};
  const auto params = model.parameters().download();
  const anycl::Tensor logits = model.forward(x, ctx);
  // Host: h = relu(x·W1 + b1), dropped = h·mask·scale, logits = dropped·W2 + b2.
  const float* w1 = params.data();
  const float* b1 = w1 + kIn * kHidden;
  const float* w2 = b1 + kHidden;
  const float* b2 = w2 + kHidden * kOut;
  std::vector<float> h(kRows * kHidden);
  for (size_t r = 0; r < kRows; ++r)
    for (size_t j = 0; j < kHidden; ++j) {
      double s = 0;
      for (size_t i = 0; i < kIn; ++i) s += double(x_host[r * kIn + i]) * w1[i * kHidden + j];
      h[r * kHidden + j] = std::max(0.f, float(s + b1[j]));
    }
  const DropoutMask m{0.4f, ctx.seed, ctx.step, 0x10000u + 1, ctx.row_base};  // stream: base + layer index
  std::vector<float> dropped(h.size());
  anycl::reference::dropout_forward(h.data(), dropped.data(), kRows, kHidden, m);
  std::vector<float> ref_logits(kRows * kOut);
  for (size_t r = 0; r < kRows; ++r)
    for (size_t k = 0; k < kOut; ++k) {
      double s = b2[k];
      for (size_t j = 0; j < kHidden; ++j) s += double(dropped[r * kHidden + j]) * w2[j * kOut + k];
      ref_logits[r * kOut + k] = float(s);
    }
  anycl::test::check_close(logits.download(), ref_logits, 1e-4, 1e-4, "logits");
  // Backward from dlogits = 1: db1[j] = Σ_r mask·scale·relu'(h)·Σ_k W2[j,k].
  auto dlogits = anycl::Tensor::from_host(rt, {kRows, kOut}, std::vector<float>(kRows * kOut, 1.f));
  model.backward(dlogits, ctx);
  const auto grads = model.gradients().download();
  std::vector<float> db1_ref(kHidden, 0.f);
  for (size_t j = 0; j < kHidden; ++j) {
    double w_sum = 0;
    for (size_t k = 0; k < kOut; ++k) w_sum += w2[j * kOut + k];
    double s = 0;
    for (size_t r = 0; r < kRows; ++r)
      if (dropped[r * kHidden + j] != 0.f) s += (1.0 / (1.0 - 0.4)) * w_sum;
    db1_ref[j] = float(s);
  }
  anycl::test::check_close(
      std::vector<float>(grads.begin() + kIn * kHidden, grads.begin() + kIn * kHidden + kHidden), db1_ref,
      1e-4, 1e-4, "first layer's bias gradient");
  // Evaluation: dropout is the identity and the Dense runs its own stage.
  const anycl::Tensor eval = model.forward(x, anycl::StepContext{});
  std::vector<float> eval_ref(kRows * kOut);
  for (size_t r = 0; r < kRows; ++r)
    for (size_t k = 0; k < kOut; ++k) {
      double s = b2[k];
      for (size_t j = 0; j < kHidden; ++j) s += double(h[r * kHidden + j]) * w2[j * kOut + k];
      eval_ref[r * kOut + k] = float(s);
    }
  anycl::test::check_close(eval.download(), eval_ref, 1e-4, 1e-4, "evaluation logits");
}
