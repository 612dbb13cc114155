// The six optimizers against tests/reference/optimizer.hpp over several steps (state carried),
// hand-computed Keras anchors, default learning rates, and hyper-parameter validation.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <anycl/error.hpp>
#include <anycl/optim/optimizer.hpp>

#include <cmath>
#include <limits>

#include "helpers.hpp"
#include "reference/optimizer.hpp"

using anycl::OptimizerConfig;

namespace {

const char* const kNames[] = {"sgd", "momentum", "nesterov", "rmsprop", "adam", "adamw"};

OptimizerConfig config(const char* name, float lr = 0.f) {
  OptimizerConfig c;
  c.name = name;
  c.lr = lr;
  return c;
}

// Runs `steps` updates on the device and on the host with the same fresh gradients each step.
void check_against_reference(const OptimizerConfig& c, size_t n, int steps, unsigned seed) {
  auto& rt = anycl::test::runtime();
  auto opt = anycl::make_optimizer(rt, n, c);
  anycl::reference::Optimizer ref(c, n);
  std::vector<float> w = anycl::test::random_floats(n, -1.f, 1.f, seed);
  auto params = anycl::Tensor::from_host(rt, {n}, w);
  anycl::Tensor grads(rt, {n});
  const std::string what = fmt::format("{} lr {} n {}", c.name, c.lr, n);
  for (int s = 0; s < steps; ++s) {
    // Gradients across magnitudes (1e-4 … 1) so ε's placement matters.
    auto g = anycl::test::random_floats(n, -1.f, 1.f, seed + 1 + unsigned(s));
    for (size_t i = 0; i < n; i += 3) g[i] *= 1e-4f;
    grads.upload(g);
    opt->step(params, grads);
    ref.step(w, g);
    anycl::test::check_close(params.download(), w, 1e-7, 2e-5, fmt::format("{} step {}", what, s + 1));
  }
  CHECK(opt->iterations() == uint64_t(steps));
  CHECK(opt->learning_rate() == ref.learning_rate());
  const auto state = opt->state();
  if (c.name != "sgd")
    anycl::test::check_close(state.at(0)->download(), ref.state1(), 1e-7, 2e-5, what + " state 0");
  if (state.size() > 1)
    anycl::test::check_close(state.at(1)->download(), ref.state2(), 1e-9, 2e-5, what + " state 1");
}

// Minimises f(w) = w²/2 (gradient w) from w = `w0` for `steps` steps; returns w after each step.
std::vector<float> scalar_descent(const OptimizerConfig& c, float w0, int steps) {
  auto& rt = anycl::test::runtime();
  auto opt = anycl::make_optimizer(rt, 1, c);
  auto w = anycl::Tensor::from_host(rt, {1}, {w0});
  anycl::Tensor g(rt, {1});
  std::vector<float> out;
  for (int s = 0; s < steps; ++s) {
    g.upload(w.download());
    opt->step(w, g);
    out.push_back(w.download()[0]);
  }
  return out;
}

}  // namespace

TEST_CASE("each optimizer matches the reference over several steps") {
  unsigned seed = 1;
  for (const char* name : kNames)
    for (size_t n : {1u, 7u, 40u, 48u, 1025u}) {                       // below, at and past 16 per work-item
      check_against_reference(config(name), n, 5, seed += 10);         // default lr
      check_against_reference(config(name, 0.05f), n, 5, seed += 10);  // explicit lr
    }
  OptimizerConfig c = config("adamw", 0.01f);  // non-default hyper-parameters reach the kernel
  c.beta1 = 0.8f, c.beta2 = 0.99f, c.epsilon = 1e-5f, c.weight_decay = 0.1f;
  check_against_reference(c, 65, 7, 500);
  c = config("nesterov", 0.02f);
  c.momentum = 0.5f;
  check_against_reference(c, 65, 7, 600);
  c = config("rmsprop", 0.01f);
  c.rho = 0.5f, c.epsilon = 1e-3f;
  check_against_reference(c, 65, 7, 700);
}

// Numbers worked by hand from the Keras formulas on f(w) = w²/2.
TEST_CASE("optimizers follow Keras on a worked scalar example") {
  // SGD lr 0.1 from 1: 0.9, 0.81. Momentum 0.9: steps 0.1 then 0.18 (Keras' docstring example).
  auto sgd = scalar_descent(config("sgd", 0.1f), 1.f, 2);
  CHECK(sgd[0] == doctest::Approx(0.9));
  CHECK(sgd[1] == doctest::Approx(0.81));
  auto mom = scalar_descent(config("momentum", 0.1f), 1.f, 2);
  CHECK(mom[0] == doctest::Approx(0.9));
  CHECK(mom[1] == doctest::Approx(0.72));
  // Nesterov: v = −0.1, w = 1 + 0.9·(−0.1) − 0.1 = 0.81.
  CHECK(scalar_descent(config("nesterov", 0.1f), 1.f, 1)[0] == doctest::Approx(0.81));
  // RMSprop lr 0.1 from 10 (Keras' docstring): a = 10, w = 10 − 0.1·10/√(10 + 1e-7) = 9.683772.
  CHECK(scalar_descent(config("rmsprop", 0.1f), 10.f, 1)[0] == doctest::Approx(9.683772).epsilon(1e-6));
  // A tiny gradient shows ε inside the root: g = 1e-4, a = 1e-9, step = 1e-5/√(1.01e-7).
  CHECK(scalar_descent(config("rmsprop", 0.1f), 1e-4f, 1)[0] ==
        doctest::Approx(1e-4 - 1e-5 / std::sqrt(1.01e-7)).epsilon(1e-4));
  // Adam: the bias corrections cancel on step 1, so w moves by about lr·sign(g) when |g| ≫ ε.
  CHECK(scalar_descent(config("adam", 0.1f), 1.f, 1)[0] == doctest::Approx(0.9).epsilon(1e-5));
  // AdamW decays first: 1·(1 − 0.1·0.004) − 0.1.
  CHECK(scalar_descent(config("adamw", 0.1f), 1.f, 1)[0] == doctest::Approx(0.8996).epsilon(1e-5));
}

TEST_CASE("learning rate 0 selects the Keras default of each optimizer") {
  auto& rt = anycl::test::runtime();
  for (const char* name : kNames) {
    const float expect =
        std::string(name) == "sgd" || std::string(name) == "momentum" || std::string(name) == "nesterov"
            ? 0.01f
            : 0.001f;
    auto opt = anycl::make_optimizer(rt, 3, config(name));
    CHECK_MESSAGE(opt->learning_rate() == expect, name);
    CHECK(opt->name() == name);
    CHECK(opt->iterations() == 0);
  }
}

TEST_CASE("invalid hyper-parameters and unknown names are rejected") {
  auto& rt = anycl::test::runtime();
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  for (float lr : {-0.1f, nan, inf, 11.f})
    CHECK_THROWS_WITH_AS(anycl::make_optimizer(rt, 3, config("adam", lr)), doctest::Contains("learning rate"),
                         anycl::ValidationError);
  auto bad = [&](auto tweak) {
    OptimizerConfig c = config("adam");
    tweak(c);
    return anycl::make_optimizer(rt, 3, c);
  };
  CHECK_THROWS_AS(bad([](OptimizerConfig& c) { c.momentum = 1.f; }), anycl::ValidationError);
  CHECK_THROWS_AS(bad([](OptimizerConfig& c) { c.momentum = -0.5f; }), anycl::ValidationError);
  CHECK_THROWS_AS(bad([](OptimizerConfig& c) { c.rho = 1.f; }), anycl::ValidationError);
  CHECK_THROWS_AS(bad([](OptimizerConfig& c) { c.beta1 = 1.f; }), anycl::ValidationError);
  CHECK_THROWS_AS(bad([=](OptimizerConfig& c) { c.beta2 = nan; }), anycl::ValidationError);
  CHECK_THROWS_AS(bad([](OptimizerConfig& c) { c.epsilon = 0.f; }), anycl::ValidationError);
  CHECK_THROWS_WITH_AS(anycl::make_optimizer(rt, 3, config("adagrad")),
                       doctest::Contains("sgd, momentum, nesterov, rmsprop, adam, adamw"),
                       anycl::ValidationError);

  auto opt = anycl::make_optimizer(rt, 4, config("sgd"));
  anycl::Tensor p(rt, {5}), g(rt, {5});
  CHECK_THROWS_AS(opt->step(p, g), anycl::ValidationError);  // built for 4
  anycl::Tensor view = p.rows(1, 4), g4(rt, {4});
  CHECK_THROWS_AS(opt->step(view, g4), anycl::ValidationError);  // params must start the buffer
}
