// BatchNormalization with an activation of its own (Keras' Conv2D → BatchNormalization → ReLU):
// y = act(γ·x̂ + β) against the host reference, the backward by finite differences through the
// activation, bit-identical reruns, each over every form of the reductions (batchnorm_form.hpp), and
// the `bn:ACT` token and model-file form.
#include <doctest/doctest.h>
#include <anycl/error.hpp>
#include <anycl/nn/batchnorm.hpp>
#include <anycl/nn/model_from_flags.hpp>
#include <anycl/nn/sequential.hpp>
#include <anycl/train/model_file.hpp>

#include <cmath>
#include <string>
#include <vector>

#include "batchnorm_form.hpp"
#include "built_batchnorm.hpp"
#include "helpers.hpp"
#include "reference/activation.hpp"
#include "reference/batchnorm.hpp"

namespace {

using anycl::Activation;

// linear first: plain BatchNormalization, whose finite-difference check this table also runs.
const Activation kActivations[] = {Activation::linear,  Activation::relu,       Activation::tanh,
                                   Activation::sigmoid, Activation::leaky_relu, Activation::elu,
                                   Activation::gelu};

}  // namespace

TEST_CASE("BatchNormalization with an activation matches the host reference - training and inference") {
  auto& rt = anycl::test::runtime();
  unsigned seed = 4700;
  size_t k = 0;
  // Every form of the reductions (one group a channel, in rows as on PoCL's CPU driver, split as on
  // GPUs) on every device.
  for (const anycl::Shape& in : {anycl::Shape{6}, anycl::Shape{3, 4, 5}, anycl::Shape{2, 17, 17}}) {
    for (const Activation act : kActivations) {
      const anycl::test::BatchNormReduction& reduction = anycl::test::kBatchNormReductions[k % 4];
      const anycl::test::BatchNormForm form(rt, reduction);
      CAPTURE(reduction.name());
      const size_t batch = 1 + (k++ % 3) * 5;
      CAPTURE(anycl::shape_string(in));
      CAPTURE(anycl::to_string(act));
      CAPTURE(batch);
      const size_t c = in[0], plane = anycl::shape_size(in) / c, n = batch * anycl::shape_size(in);
      anycl::test::BuiltBatchNorm b(rt, in, batch, act);
      const auto p = anycl::test::random_floats(2 * c, -1.f, 1.f, seed++);  // γ of either sign
      b.params.upload(p);
      const auto x = anycl::test::random_floats(n, -2.f, 2.f, seed++);
      anycl::Shape shape{batch};
      shape.insert(shape.end(), in.begin(), in.end());
      anycl::StepContext train;
      train.training = true;
      const anycl::Tensor xt = anycl::Tensor::from_host(rt, shape, x);
      b.layer.forward(anycl::Tensor::from_host(rt, shape, std::vector<float>(n, std::nanf(""))),
                      anycl::StepContext{});  // poison the output
      const anycl::Tensor y = b.layer.forward(xt, train);
      const anycl::reference::BatchNormStats st = anycl::reference::batchnorm_stats(x, batch, c, plane);
      anycl::test::check_close(
          y.download(),
          anycl::reference::batchnorm_forward(p.data(), x, batch, c, plane, st.mean, st.var, 1e-3f, act),
          2e-4, 2e-4, "training forward");
      const auto dy = anycl::test::random_floats(n, -1.f, 1.f, seed++);
      anycl::Tensor dyt = anycl::Tensor::from_host(rt, shape, dy);
      b.grads.fill(std::nanf(""));
      const anycl::Tensor dx = b.layer.backward(dyt, train, true);
      std::vector<float> g_ref(2 * c);
      const auto dx_ref =
          anycl::reference::batchnorm_backward(p.data(), x, dy, batch, c, plane, 1e-3f, g_ref.data(), act);
      anycl::test::check_close(b.grads.download(), g_ref, 2e-4, 2e-4, "dgamma, dbeta");
      anycl::test::check_close(dx.download(), dx_ref, 2e-4, 2e-3, "dx");
      const std::vector<float> moving = b.state.download();
      const anycl::Tensor yi = b.layer.forward(xt, anycl::StepContext{});
      anycl::test::check_close(
          yi.download(),
          anycl::reference::batchnorm_forward(
              p.data(), x, batch, c, plane, std::vector<float>(moving.begin(), moving.begin() + long(c)),
              std::vector<float>(moving.begin() + long(c), moving.end()), 1e-3f, act),
          2e-4, 2e-4, "inference forward");
    }
  }
}

TEST_CASE("BatchNormalization's backward through its activation agrees with finite differences") {
  auto& rt = anycl::test::runtime();
  const anycl::Shape in{2, 3, 2};
  const size_t batch = 3, c = 2, plane = 6, n = batch * c * plane;
  const double eps = 1e-3;
  for (const anycl::test::BatchNormReduction& reduction : anycl::test::kBatchNormReductions) {
    for (const Activation act : kActivations) {
      CAPTURE(reduction.name());
      CAPTURE(anycl::to_string(act));
      const anycl::test::BatchNormForm form(rt, reduction);
      anycl::test::BuiltBatchNorm b(rt, in, batch, act);
      const auto p = anycl::test::random_floats(2 * c, 0.5f, 1.5f, 51);
      b.params.upload(p);
      const auto x = anycl::test::random_floats(n, -1.f, 1.f, 52);
      const auto r = anycl::test::random_floats(n, -1.f, 1.f, 53);  // L = Σ r·y
      const auto loss = [&](const std::vector<double>& xx, const std::vector<double>& pp) {
        double total = 0;
        for (size_t ch = 0; ch < c; ++ch) {
          double mean = 0, var = 0;
          for (size_t k = 0; k < batch; ++k)
            for (size_t s = 0; s < plane; ++s) mean += xx[(k * c + ch) * plane + s];
          mean /= double(batch * plane);
          for (size_t k = 0; k < batch; ++k)
            for (size_t s = 0; s < plane; ++s) var += std::pow(xx[(k * c + ch) * plane + s] - mean, 2);
          var /= double(batch * plane);
          for (size_t k = 0; k < batch; ++k)
            for (size_t s = 0; s < plane; ++s) {
              const size_t i = (k * c + ch) * plane + s;
              const double z = (xx[i] - mean) / std::sqrt(var + eps) * pp[ch] + pp[c + ch];
              total += r[i] * anycl::reference::activate(z, act);
            }
        }
        return total;
      };
      anycl::StepContext train;
      train.training = true;
      b.layer.forward(anycl::Tensor::from_host(rt, {batch, 2, 3, 2}, x), train);
      anycl::Tensor dyt = anycl::Tensor::from_host(rt, {batch, 2, 3, 2}, r);
      const std::vector<float> dx = b.layer.backward(dyt, train, true).download();
      const std::vector<float> g = b.grads.download();
      const std::vector<double> xd(x.begin(), x.end()), pd(p.begin(), p.end());
      const double h = 1e-4;
      for (size_t i = 0; i < n; ++i) {
        auto plus = xd, minus = xd;
        plus[i] += h, minus[i] -= h;
        CHECK(dx[i] ==
              doctest::Approx((loss(plus, pd) - loss(minus, pd)) / (2 * h)).epsilon(2e-3).scale(1.0));
      }
      for (size_t i = 0; i < 2 * c; ++i) {
        auto plus = pd, minus = pd;
        plus[i] += h, minus[i] -= h;
        CHECK(g[i] == doctest::Approx((loss(xd, plus) - loss(xd, minus)) / (2 * h)).epsilon(2e-3).scale(1.0));
      }
    }
  }
}

TEST_CASE("BatchNormalization with relu - runs are bit-identical on wide and narrow planes") {
  auto& rt = anycl::test::runtime();
  for (const anycl::Shape& in : {anycl::Shape{4, 20, 20}, anycl::Shape{8, 6, 6}, anycl::Shape{40}}) {
    for (const anycl::test::BatchNormReduction& reduction : anycl::test::kBatchNormReductions) {
      CAPTURE(anycl::shape_string(in));
      CAPTURE(reduction.name());
      const size_t batch = 9, n = batch * anycl::shape_size(in);
      anycl::Shape shape{batch};
      shape.insert(shape.end(), in.begin(), in.end());
      const auto x = anycl::test::random_floats(n, -1.f, 1.f, 61);
      const auto dy = anycl::test::random_floats(n, -1.f, 1.f, 62);
      std::vector<std::vector<float>> outputs;
      for (int run = 0; run < 2; ++run) {
        const anycl::test::BatchNormForm form(rt, reduction);
        anycl::test::BuiltBatchNorm b(rt, in, batch, Activation::relu);
        outputs.push_back(b.training_step(rt, shape, x, dy));
      }
      CHECK(outputs[0] == outputs[1]);
    }
  }
}

TEST_CASE("bn:ACT tokens - the model-file form and the summary of a BatchNormalization with an activation") {
  // Plain bn stays linear (and its line unchanged) whatever --activation says; bn:ACT adds the word.
  anycl::LayerListDefaults tanh_default;
  tanh_default.activation = Activation::tanh;
  const auto list =
      anycl::parse_layer_list("conv8x3:linear,bn:relu,bn0.9_1e-05:gelu,bn,bn:linear", tanh_default);
  REQUIRE(list.size() == 5);
  CHECK(list[0].args.find(" linear ") != std::string::npos);
  CHECK(list[1] == anycl::LayerSpec{"batchnorm", "0.99 0.001 relu"});
  CHECK(list[2] == anycl::LayerSpec{"batchnorm", "0.9 1e-05 gelu"});
  CHECK(list[3] == anycl::LayerSpec{"batchnorm", "0.99 0.001"});
  CHECK(list[4] == anycl::LayerSpec{"batchnorm", "0.99 0.001"});
  CHECK_THROWS_AS(anycl::parse_layer_list("bn:softmax", {}), anycl::ValidationError);
  CHECK_THROWS_AS(anycl::parse_layer_list("flatten:relu", {}), anycl::ValidationError);
  for (const char* args : {"0.99 0.001 relu", "0.9 1e-05 elu", "0.99 0.001"})
    CHECK(anycl::make_layer({"batchnorm", args})->spec() == anycl::LayerSpec{"batchnorm", args});
  CHECK(static_cast<const anycl::BatchNormalization&>(*anycl::make_layer({"batchnorm", "0.9 0.001 tanh"}))
            .activation() == Activation::tanh);

  anycl::Sequential model(anycl::Shape{2, 6, 6});
  model.conv2d(3, 3, Activation::linear).add({"batchnorm", "0.9 0.001 relu"}).flatten();
  model.dense(2);
  const std::string summary = model.summary();
  CHECK(summary.find("BatchNormalization") != std::string::npos);
  CHECK(summary.find("relu") != std::string::npos);
  auto& rt = anycl::test::runtime();
  model.build(rt, 4);
  model.initialize(3);
  const anycl::test::TempDir dir;
  const std::string path = dir.path() + "/bnrelu.anycl";
  anycl::save_model(path, model, 2);
  const anycl::SavedModel saved = anycl::read_model(path);
  CHECK(saved.spec.layers[1] == anycl::LayerSpec{"batchnorm", "0.9 0.001 relu"});
  CHECK(anycl::instantiate(saved, rt, 4)->download_weights() == model.download_weights());
}
