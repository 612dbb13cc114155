// MaxPool2D and Flatten against tests/reference/conv.hpp: forward with a NaN pass first
// (poisoned outputs), backward (overlapping windows included) against the reference and against
// finite differences; Flatten is a reshape both ways.
#include <doctest/doctest.h>
#include <anycl/error.hpp>
#include <anycl/nn/flatten.hpp>
#include <anycl/nn/maxpool2d.hpp>

#include <cmath>

#include "helpers.hpp"
#include "reference/conv.hpp"

TEST_CASE("MaxPool2D forward and backward match the host reference, overlapping windows included") {
  auto& rt = anycl::test::runtime();
  struct Case {
    size_t c, h, w, size, stride;
    bool ties;  // inputs in {-1, 0, 1}: the first maximum of a window wins
  };
  unsigned seed = 1700;
  for (const Case k : {Case{2, 6, 6, 2, 2, false}, Case{3, 7, 5, 2, 2, false}, Case{3, 7, 5, 2, 2, true},
                       Case{2, 6, 6, 2, 2, true}, Case{1, 7, 7, 3, 2, false}, Case{2, 5, 6, 3, 1, true},
                       Case{1, 4, 4, 4, 4, false}}) {
    CAPTURE(k.h);
    CAPTURE(k.size);
    CAPTURE(k.stride);
    CAPTURE(k.ties);
    const size_t batch = 3, in = k.c * k.h * k.w;
    anycl::MaxPool2D pool(k.size, k.stride);
    const anycl::PoolGeometry g = pool.geometry({k.c, k.h, k.w});
    pool.build(rt, {k.c, k.h, k.w}, batch, {}, {}, 0);
    auto x = anycl::test::random_floats(batch * in, -1.f, 1.f, seed++);
    if (k.ties)
      for (float& v : x) v = std::round(v);
    anycl::StepContext ctx;
    ctx.training = true;
    pool.forward(anycl::Tensor::from_host(rt, {batch, in}, std::vector<float>(x.size(), std::nanf(""))), ctx);
    anycl::Tensor y = pool.forward(anycl::Tensor::from_host(rt, {batch, in}, x), ctx);
    const auto y_ref = anycl::reference::maxpool_forward(g, x, batch);
    CHECK(y.shape() == std::vector<size_t>{batch, k.c, g.out_h, g.out_w});
    anycl::test::check_close(y.download(), y_ref, 0, 0, "maxpool forward");
    const auto dy = anycl::test::random_floats(y_ref.size(), -1.f, 1.f, seed++);
    auto dyt = anycl::Tensor::from_host(rt, y.shape(), dy);
    anycl::Tensor dx = pool.backward(dyt, ctx, true);
    anycl::test::check_close(dx.download(), anycl::reference::maxpool_backward(g, x, dy, batch), 1e-6, 1e-6,
                             "maxpool backward");
  }
}

TEST_CASE("MaxPool2D backward agrees with finite differences") {
  auto& rt = anycl::test::runtime();
  const size_t batch = 2, c = 2, h = 5, w = 5;
  anycl::MaxPool2D pool(3, 2);  // overlapping windows
  const anycl::PoolGeometry g = pool.geometry({c, h, w});
  pool.build(rt, {c, h, w}, batch, {}, {}, 0);
  const auto x = anycl::test::random_floats(batch * c * h * w, -1.f, 1.f, 21);  // distinct values: no ties
  const auto r = anycl::test::random_floats(batch * c * g.out_h * g.out_w, -1.f, 1.f, 22);
  const std::vector<double> xd(x.begin(), x.end());
  auto loss = [&](const std::vector<double>& xx) {
    const auto y = anycl::reference::maxpool_forward(g, xx, batch);
    double sum = 0;
    for (size_t i = 0; i < y.size(); ++i) sum += double(r[i]) * y[i];
    return sum;
  };
  std::vector<float> fd(x.size());
  const double step = 1e-6;
  for (size_t i = 0; i < x.size(); ++i) {
    auto a = xd, b = xd;
    a[i] += step, b[i] -= step;
    fd[i] = float((loss(a) - loss(b)) / (2 * step));
  }
  anycl::StepContext ctx;
  anycl::Tensor y = pool.forward(anycl::Tensor::from_host(rt, {batch, c * h * w}, x), ctx);
  auto dy = anycl::Tensor::from_host(rt, y.shape(), r);
  anycl::test::check_close(pool.backward(dy, ctx, true).download(), fd, 1e-5, 1e-4,
                           "maxpool dx vs finite differences");
}

TEST_CASE("MaxPool2D and Flatten shapes - a list that pools below 1x1 is refused with the reason") {
  const anycl::MaxPool2D pool(2, 2);
  CHECK(pool.output_shape({32, 24, 24}) == anycl::Shape{32, 12, 12});
  CHECK(anycl::MaxPool2D(3, 2).output_shape({1, 7, 7}) == anycl::Shape{1, 3, 3});
  CHECK_THROWS_WITH_AS(pool.output_shape({3, 1, 1}), doctest::Contains("less than 1×1"),
                       anycl::ValidationError);
  CHECK_THROWS_WITH_AS(pool.output_shape({9}), doctest::Contains("needs image inputs"),
                       anycl::ValidationError);
  CHECK_THROWS_AS(anycl::MaxPool2D(0, 2), anycl::ValidationError);
  const anycl::Flatten flatten;
  CHECK(flatten.output_shape({64, 12, 12}) == anycl::Shape{9216});
  CHECK(flatten.output_shape({10}) == anycl::Shape{10});
}

TEST_CASE("Flatten reshapes forward and backward without touching the values") {
  auto& rt = anycl::test::runtime();
  anycl::Flatten flatten;
  flatten.build(rt, {2, 3, 4}, 5, {}, {}, 0);
  const auto x = anycl::test::random_floats(5 * 24, -1.f, 1.f, 31);
  const auto xt = anycl::Tensor::from_host(rt, {5, 2, 3, 4}, x);
  anycl::Tensor y = flatten.forward(xt, {});
  CHECK(y.shape() == std::vector<size_t>{5, 24});
  CHECK(y.download() == x);
  anycl::Tensor dx = flatten.backward(y, {}, true);
  CHECK(dx.shape() == std::vector<size_t>{5, 2, 3, 4});
  CHECK(dx.download() == x);
}
