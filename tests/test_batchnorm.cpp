// BatchNormalization against tests/reference/batchnorm.hpp: the training forward (batch
// statistics, the moving ones updated), the inference forward (moving statistics) and the
// training-mode backward, per feature (after Dense) and per channel of NCHW (after Conv2D), with
// poisoned outputs; bit-identical repeats, over the forms of the reductions (batchnorm_form.hpp); the
// model's summary, model file and Keras weight order (the backward against finite differences is
// test_batchnorm_activation.cpp's, linear included).
#include <doctest/doctest.h>
#include <anycl/error.hpp>
#include <anycl/nn/batchnorm.hpp>
#include <anycl/nn/model_from_flags.hpp>
#include <anycl/nn/sequential.hpp>
#include <anycl/train/keras_weights.hpp>
#include <anycl/train/model_file.hpp>

#include <cmath>

#include "batchnorm_form.hpp"
#include "built_batchnorm.hpp"
#include "helpers.hpp"
#include "reference/batchnorm.hpp"

TEST_CASE("BatchNormalization matches the host reference per feature and per channel") {
  auto& rt = anycl::test::runtime();
  unsigned seed = 4600;
  size_t form_index = 0;
  for (const anycl::Shape& in : {anycl::Shape{5}, anycl::Shape{3, 4, 5}, anycl::Shape{2, 1, 1},
                                 anycl::Shape{300}, anycl::Shape{2, 20, 20}}) {
    for (size_t batch : {size_t(1), size_t(7), size_t(64)}) {
      const anycl::test::BatchNormReduction& reduction = anycl::test::kBatchNormReductions[form_index++ % 4];
      CAPTURE(anycl::shape_string(in));
      CAPTURE(batch);
      CAPTURE(reduction.name());
      const size_t c = in[0], plane = anycl::shape_size(in) / c, n = batch * anycl::shape_size(in);
      const anycl::test::BatchNormForm form(rt, reduction);
      anycl::test::BuiltBatchNorm b(rt, in, batch, anycl::Activation::linear, 0.9f, 1e-3f);
      CHECK(b.state.download() == [&] {
        std::vector<float> v(2 * c, 0.f);
        std::fill(v.begin() + long(c), v.end(), 1.f);
        return v;
      }());
      auto p = anycl::test::random_floats(2 * c, -1.f, 1.f, seed++);
      for (size_t k = 0; k < c; ++k) p[k] += 1.5f;  // γ away from 0
      b.params.upload(p);
      auto moving = anycl::test::random_floats(2 * c, 0.1f, 2.f, seed++);
      b.state.upload(moving);
      // Shifted, scaled inputs: the shifted sums' variance must not lose them.
      auto x = anycl::test::random_floats(n, -2.f, 2.f, seed++);
      for (float& v : x) v = v * 3.f + 10.f;
      anycl::Shape shape{batch};
      shape.insert(shape.end(), in.begin(), in.end());
      anycl::StepContext train;
      train.training = true;
      const anycl::Tensor xt = anycl::Tensor::from_host(rt, shape, x);
      // Poison: a NaN input first (the output and statistics must be fully rewritten after it).
      b.layer.forward(anycl::Tensor::from_host(rt, shape, std::vector<float>(n, std::nanf(""))),
                      anycl::StepContext{});
      const anycl::Tensor y = b.layer.forward(xt, train);
      const anycl::reference::BatchNormStats st = anycl::reference::batchnorm_stats(x, batch, c, plane);
      anycl::test::check_close(
          y.download(),
          anycl::reference::batchnorm_forward(p.data(), x, batch, c, plane, st.mean, st.var, 1e-3f), 2e-4,
          2e-4, "training forward");
      anycl::reference::batchnorm_update_moving(moving, st, 0.9f);
      anycl::test::check_close(b.state.download(), moving, 1e-5, 1e-5, "moving statistics");
      // Backward through the batch statistics, dx in place of dy.
      const auto dy = anycl::test::random_floats(n, -1.f, 1.f, seed++);
      anycl::Tensor dyt = anycl::Tensor::from_host(rt, shape, dy);
      b.grads.fill(std::nanf(""));
      const anycl::Tensor dx = b.layer.backward(dyt, train, true);
      std::vector<float> g_ref(2 * c);
      const auto dx_ref =
          anycl::reference::batchnorm_backward(p.data(), x, dy, batch, c, plane, 1e-3f, g_ref.data());
      anycl::test::check_close(b.grads.download(), g_ref, 2e-4, 2e-4, "dgamma, dbeta");
      anycl::test::check_close(dx.download(), dx_ref, 2e-4, 2e-3, "dx");
      // Inference: the moving statistics, which it leaves alone.
      const std::vector<float> moving_now = b.state.download();
      const anycl::Tensor yi = b.layer.forward(xt, anycl::StepContext{});
      anycl::test::check_close(
          yi.download(),
          anycl::reference::batchnorm_forward(
              p.data(), x, batch, c, plane, std::vector<float>(moving.begin(), moving.begin() + long(c)),
              std::vector<float>(moving.begin() + long(c), moving.end()), 1e-3f),
          2e-4, 2e-4, "inference forward");
      CHECK(b.state.download() == moving_now);
    }
  }
}

// The training backward's finite-difference check (plain BatchNormalization included, as its linear
// case) is tests/test_batchnorm_activation.cpp's, over every activation.

TEST_CASE("BatchNormalization runs are bit-identical (fixed-order reductions)") {
  auto& rt = anycl::test::runtime();
  const anycl::Shape in{8, 6, 6};
  const size_t batch = 16, n = batch * 8 * 36;
  const auto x = anycl::test::random_floats(n, -1.f, 1.f, 41);
  const auto dy = anycl::test::random_floats(n, -1.f, 1.f, 42);
  for (const anycl::test::BatchNormReduction& reduction : anycl::test::kBatchNormReductions) {
    CAPTURE(reduction.name());
    std::vector<std::vector<float>> outputs;
    for (int run = 0; run < 2; ++run) {
      const anycl::test::BatchNormForm form(rt, reduction);
      anycl::test::BuiltBatchNorm b(rt, in, batch, anycl::Activation::linear, 0.99f, 1e-3f);
      outputs.push_back(b.training_step(rt, {batch, 8, 6, 6}, x, dy));
    }
    CHECK(outputs[0] == outputs[1]);
  }
}

TEST_CASE("BatchNormalization in a model: arguments, tokens, summary, model file and Keras weights") {
  CHECK(anycl::make_layer({"batchnorm", "0.99 0.001"})->spec() ==
        anycl::LayerSpec{"batchnorm", "0.99 0.001"});
  for (const char* bad : {"", "0.99", "1.5 0.001", "0.9 0", "0.9 -1", "0.9 0.001 3", "x y", "0.9 nan",
                          "0.9 0.001 relu x", "0.9 0.001 softmax", "0.9 0.001 "})
    CHECK_THROWS_AS(anycl::make_layer({"batchnorm", bad}), anycl::ValidationError);
  const auto list = anycl::parse_layer_list("16,bn,bn0.9,bn0.5_1e-05", {});
  REQUIRE(list.size() == 4);
  CHECK(list[1] == anycl::LayerSpec{"batchnorm", "0.99 0.001"});
  CHECK(list[2] == anycl::LayerSpec{"batchnorm", "0.9 0.001"});
  CHECK(list[3] == anycl::LayerSpec{"batchnorm", "0.5 1e-05"});
  for (const char* bad : {"bnx", "bn2", "bn0.9_", "bn0.9_0"})
    CHECK_THROWS_AS(anycl::parse_layer_list(bad, {}), anycl::ValidationError);

  // Keras: BatchNormalization(C) has 4·C weights, 2·C of them trainable.
  anycl::Sequential model(anycl::Shape{3, 8, 8});
  model.conv2d(4, 3, anycl::Activation::linear)
      .add({"batchnorm", "0.99 0.001"})
      .flatten()
      .dense(6)
      .add({"batchnorm", "0.9 0.001"});
  model.dense(3);
  const std::string summary = model.summary();
  CHECK(summary.find("batchnorm (BatchNormalization)") != std::string::npos);
  const size_t trainable = (4 * 27 + 4) + 8 + (144 * 6 + 6) + 12 + (6 * 3 + 3);
  CHECK(model.parameter_count() == trainable);
  CHECK(model.state_count() == 8 + 12);
  REQUIRE(trainable == 1023);
  CHECK(summary.find("Total params: 1,043\n") != std::string::npos);
  CHECK(summary.find("Trainable params: 1,023\n") != std::string::npos);
  CHECK(summary.find("Non-trainable params: 20") != std::string::npos);
  CHECK(summary.find(" 16\n") != std::string::npos);  // the first batchnorm's Param #

  auto& rt = anycl::test::runtime();
  model.build(rt, 4);
  model.initialize(7);
  std::vector<float> weights = model.download_weights();
  REQUIRE(weights.size() == trainable + 20);
  for (size_t i = 0; i < weights.size(); ++i) weights[i] = float(i % 13) * 0.25f + 0.5f;
  model.upload_weights(weights);
  CHECK_THROWS_AS(model.upload_weights(std::vector<float>(trainable)), anycl::ValidationError);

  const anycl::test::TempDir dir;
  const std::string path = dir.path() + "/bn.anycl";
  anycl::save_model(path, model, 3);
  const anycl::SavedModel saved = anycl::read_model(path);
  CHECK(saved.spec.layers[1] == anycl::LayerSpec{"batchnorm", "0.99 0.001"});
  CHECK(saved.parameters == weights);
  auto loaded = anycl::instantiate(saved, rt, 4);
  CHECK(loaded->download_weights() == weights);

  // Keras' order per BatchNormalization: gamma, beta, moving_mean, moving_variance.
  const std::vector<anycl::WeightArray> arrays = anycl::weight_arrays(saved.spec);
  REQUIRE(arrays.size() == 2 + 4 + 2 + 4 + 2);
  CHECK(arrays[2].name == "batch_normalization_1/gamma");
  CHECK(arrays[5].name == "batch_normalization_1/moving_variance");
  CHECK(arrays[5].shape == std::vector<size_t>{4});
  CHECK(arrays[2].offset == 4 * 27 + 4);
  CHECK(arrays[3].offset == 4 * 27 + 8);
  CHECK(arrays[4].offset == trainable);
  CHECK(arrays[5].offset == trainable + 4);
  CHECK(arrays[10].offset == trainable + 8);
  CHECK(arrays[11].offset == trainable + 14);
  CHECK(anycl::keras_weights(arrays[11], weights) ==
        std::vector<float>(weights.begin() + long(trainable + 14), weights.begin() + long(trainable + 20)));
}
