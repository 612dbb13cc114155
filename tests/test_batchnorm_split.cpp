// BatchNorm's reductions split over several work-groups a channel (the GPU form,
// ops/batchnorm_split.hpp), forced on the CPU runtimes here: against the host reference at plane 1,
// a plane narrower and one wider than a work-group, one channel, and shares that do not divide a
// channel's values evenly; bit-identical reruns; and how the automatic cut is chosen.
#include <doctest/doctest.h>
#include <anycl/nn/batchnorm.hpp>

#include <cmath>
#include <vector>

#include "batchnorm_form.hpp"
#include "built_batchnorm.hpp"
#include "helpers.hpp"
#include "ops/batchnorm_split.hpp"
#include "reference/batchnorm.hpp"

namespace {

using anycl::Activation;

}  // namespace

TEST_CASE("BatchNormalization split over work-groups matches the host reference") {
  auto& rt = anycl::test::runtime();
  unsigned seed = 4800;
  size_t k = 0;
  const size_t split_counts[] = {3, 7, 64, 1};
  for (const anycl::Shape& in : {anycl::Shape{1}, anycl::Shape{5}, anycl::Shape{3, 4, 5},
                                 anycl::Shape{1, 17, 17}, anycl::Shape{2, 20, 20}}) {
    for (const size_t batch : {size_t(1), size_t(7), size_t(33)}) {
      const size_t splits = split_counts[k % 4];
      const Activation act = k++ % 2 == 0 ? Activation::linear : Activation::relu;
      CAPTURE(anycl::shape_string(in));
      CAPTURE(batch);
      CAPTURE(splits);
      const size_t c = in[0], plane = anycl::shape_size(in) / c, n = batch * anycl::shape_size(in);
      const anycl::test::BatchNormForm form(rt, {false, splits});
      anycl::test::BuiltBatchNorm b(rt, in, batch, act);
      auto p = anycl::test::random_floats(2 * c, -1.f, 1.f, seed++);
      for (size_t i = 0; i < c; ++i) p[i] += 1.5f;  // γ away from 0
      b.params.upload(p);
      auto moving = anycl::test::random_floats(2 * c, 0.1f, 2.f, seed++);
      b.state.upload(moving);
      auto x = anycl::test::random_floats(n, -2.f, 2.f, seed++);
      for (float& v : x) v = v * 3.f + 10.f;  // shifted: the shifted sums must keep the variance
      anycl::Shape shape{batch};
      shape.insert(shape.end(), in.begin(), in.end());
      anycl::StepContext train;
      train.training = true;
      const anycl::Tensor xt = anycl::Tensor::from_host(rt, shape, x);
      const uint64_t launches = rt.counters().kernel_launches;
      const anycl::Tensor y = b.layer.forward(xt, train);
      CHECK(rt.counters().kernel_launches - launches == 3);  // partial sums, their finish, the element pass
      const anycl::reference::BatchNormStats st = anycl::reference::batchnorm_stats(x, batch, c, plane);
      anycl::test::check_close(
          y.download(),
          anycl::reference::batchnorm_forward(p.data(), x, batch, c, plane, st.mean, st.var, 1e-3f, act),
          2e-4, 2e-4, "training forward");
      anycl::reference::batchnorm_update_moving(moving, st, 0.9f);
      anycl::test::check_close(b.state.download(), moving, 1e-5, 1e-5, "moving statistics");
      const auto dy = anycl::test::random_floats(n, -1.f, 1.f, seed++);
      anycl::Tensor dyt = anycl::Tensor::from_host(rt, shape, dy);
      b.grads.fill(std::nanf(""));
      const anycl::Tensor dx = b.layer.backward(dyt, train, true);
      std::vector<float> g_ref(2 * c);
      const auto dx_ref =
          anycl::reference::batchnorm_backward(p.data(), x, dy, batch, c, plane, 1e-3f, g_ref.data(), act);
      anycl::test::check_close(b.grads.download(), g_ref, 2e-4, 2e-4, "dgamma, dbeta");
      anycl::test::check_close(dx.download(), dx_ref, 2e-4, 2e-3, "dx");
    }
  }
}

TEST_CASE("BatchNormalization split over work-groups - the automatic cut, as on a GPU") {
  auto& rt = anycl::test::runtime();
  const anycl::Shape in{2, 20, 20};
  const size_t batch = 16, c = 2, plane = 400, n = batch * c * plane;
  // 6,400 values a channel: at least 4 groups a channel for any compute units and work-group ≤ 256.
  REQUIRE(
      anycl::batchnorm_split(anycl::BatchNormShape{batch, c, plane}, rt.info().compute_units, 256, 0).splits >
      1);
  const anycl::test::BatchNormForm form(rt, {false, 0, true});
  anycl::test::BuiltBatchNorm b(rt, in, batch, Activation::elu);
  const auto p = anycl::test::random_floats(2 * c, 0.5f, 1.5f, 81);
  b.params.upload(p);
  const auto x = anycl::test::random_floats(n, -2.f, 2.f, 82);
  anycl::StepContext train;
  train.training = true;
  const uint64_t launches = rt.counters().kernel_launches;
  const anycl::Tensor y = b.layer.forward(anycl::Tensor::from_host(rt, {batch, 2, 20, 20}, x), train);
  CHECK(rt.counters().kernel_launches - launches == 3);
  const anycl::reference::BatchNormStats st = anycl::reference::batchnorm_stats(x, batch, c, plane);
  anycl::test::check_close(y.download(),
                           anycl::reference::batchnorm_forward(p.data(), x, batch, c, plane, st.mean, st.var,
                                                               1e-3f, Activation::elu),
                           2e-4, 2e-4, "training forward");
  const auto dy = anycl::test::random_floats(n, -1.f, 1.f, 83);
  anycl::Tensor dyt = anycl::Tensor::from_host(rt, {batch, 2, 20, 20}, dy);
  const anycl::Tensor dx = b.layer.backward(dyt, train, true);
  std::vector<float> g_ref(2 * c);
  const auto dx_ref = anycl::reference::batchnorm_backward(p.data(), x, dy, batch, c, plane, 1e-3f,
                                                           g_ref.data(), Activation::elu);
  anycl::test::check_close(b.grads.download(), g_ref, 2e-4, 2e-4, "dgamma, dbeta");
  anycl::test::check_close(dx.download(), dx_ref, 2e-4, 2e-3, "dx");
}

TEST_CASE("BatchNormalization split over work-groups - reruns are bit-identical") {
  auto& rt = anycl::test::runtime();
  for (const anycl::Shape& in : {anycl::Shape{3, 20, 20}, anycl::Shape{40}}) {
    CAPTURE(anycl::shape_string(in));
    const size_t batch = 11, n = batch * anycl::shape_size(in);
    anycl::Shape shape{batch};
    shape.insert(shape.end(), in.begin(), in.end());
    const auto x = anycl::test::random_floats(n, -1.f, 1.f, 71);
    const auto dy = anycl::test::random_floats(n, -1.f, 1.f, 72);
    std::vector<std::vector<float>> outputs;
    for (int run = 0; run < 2; ++run) {
      const anycl::test::BatchNormForm form(rt, {false, 5});
      anycl::test::BuiltBatchNorm b(rt, in, batch, Activation::relu);
      outputs.push_back(b.training_step(rt, shape, x, dy));
    }
    CHECK(outputs[0] == outputs[1]);
  }
}

TEST_CASE("batchnorm_split - groups for every compute unit, no empty share, the scratch bound") {
  using anycl::BatchNormShape;
  using anycl::BatchNormSplit;
  const auto covers = [](const BatchNormSplit& plan, size_t values) {
    return plan.splits >= 1 && plan.splits * plan.share >= values && (plan.splits - 1) * plan.share < values;
  };
  // The BatchNorm CNN's reductions on a GPU of 132 compute units (an H200), work-groups of 256.
  for (const BatchNormShape& s : {BatchNormShape{128, 32, 676}, BatchNormShape{128, 64, 576}}) {
    CAPTURE(s.channels);
    const BatchNormSplit plan = anycl::batchnorm_split(s, 132, 256, 0);
    CHECK(covers(plan, s.batch * s.plane));
    CHECK(plan.splits * s.channels >= 4 * 132);
    CHECK(plan.splits <= anycl::batchnorm_most_splits(s.channels, 132, 0));
    CHECK(plan.share >= 4 * 256);
  }
  // After Dense (plane 1) at batch 128: too few values to split, so one group a channel.
  CHECK(anycl::batchnorm_split(BatchNormShape{128, 100, 1}, 132, 256, 0).splits == 1);
  // Forced counts, cut evenly where the values allow; never more groups than values.
  const BatchNormSplit three = anycl::batchnorm_split(BatchNormShape{7, 3, 20}, 2, 256, 3);
  CHECK(three.splits == 3);
  CHECK(three.share == 47);
  const BatchNormSplit few = anycl::batchnorm_split(BatchNormShape{5, 1, 1}, 2, 256, 7);
  CHECK(few.splits == 5);
  CHECK(few.share == 1);
  CHECK(anycl::batchnorm_most_splits(64, 132, 0) == 17);
  CHECK(anycl::batchnorm_most_splits(64, 132, 7) == 7);
}
