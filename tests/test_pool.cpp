// AveragePooling2D, GlobalAveragePooling2D and GlobalMaxPooling2D against tests/reference/pool.hpp:
// forward after a NaN pass (poisoned outputs), backward (overlapping windows, ties) against the
// reference and against finite differences; shapes, tokens and refusals.
#include <doctest/doctest.h>
#include <anycl/error.hpp>
#include <anycl/nn/avgpool2d.hpp>
#include <anycl/nn/global_pool2d.hpp>
#include <anycl/nn/model_from_flags.hpp>

#include <cmath>

#include "helpers.hpp"
#include "reference/pool.hpp"

namespace {

// Central differences of L = Σ r·forward(x) in double.
template <typename Forward>
std::vector<float> finite_differences(const std::vector<float>& x, const std::vector<float>& r,
                                      Forward forward) {
  const std::vector<double> xd(x.begin(), x.end());
  auto loss = [&](const std::vector<double>& xx) {
    const std::vector<double> y = forward(xx);
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
  return fd;
}

}  // namespace

TEST_CASE("AveragePooling2D forward and backward match the host reference, overlapping windows included") {
  auto& rt = anycl::test::runtime();
  struct Case {
    size_t c, h, w, size, stride;
  };
  unsigned seed = 2700;
  for (const Case k : {Case{2, 6, 6, 2, 2}, Case{3, 7, 5, 2, 2}, Case{1, 7, 7, 3, 2}, Case{2, 5, 6, 3, 1},
                       Case{1, 4, 4, 4, 4}, Case{2, 9, 8, 2, 3}}) {
    CAPTURE(k.h);
    CAPTURE(k.w);
    CAPTURE(k.size);
    CAPTURE(k.stride);
    const size_t batch = 3, in = k.c * k.h * k.w;
    anycl::AvgPool2D pool(k.size, k.stride);
    const anycl::PoolGeometry g = pool.geometry({k.c, k.h, k.w});
    pool.build(rt, {k.c, k.h, k.w}, batch, {}, {}, 0);
    const auto x = anycl::test::random_floats(batch * in, -1.f, 1.f, seed++);
    anycl::StepContext ctx;
    ctx.training = true;
    pool.forward(anycl::Tensor::from_host(rt, {batch, in}, std::vector<float>(x.size(), std::nanf(""))), ctx);
    anycl::Tensor y = pool.forward(anycl::Tensor::from_host(rt, {batch, in}, x), ctx);
    CHECK(y.shape() == std::vector<size_t>{batch, k.c, g.out_h, g.out_w});
    anycl::test::check_close(y.download(), anycl::reference::avgpool_forward(g, x, batch), 1e-7, 1e-6,
                             "avgpool forward");
    const auto dy = anycl::test::random_floats(y.size(), -1.f, 1.f, seed++);
    auto dyt = anycl::Tensor::from_host(rt, y.shape(), dy);
    anycl::test::check_close(pool.backward(dyt, ctx, true).download(),
                             anycl::reference::avgpool_backward(g, dy, batch), 1e-7, 1e-6,
                             "avgpool backward");
  }
}

TEST_CASE("AveragePooling2D backward agrees with finite differences") {
  auto& rt = anycl::test::runtime();
  const size_t batch = 2, c = 2, h = 6, w = 5;
  anycl::AvgPool2D pool(3, 2);  // overlapping windows, a column no window reaches
  const anycl::PoolGeometry g = pool.geometry({c, h, w});
  pool.build(rt, {c, h, w}, batch, {}, {}, 0);
  const auto x = anycl::test::random_floats(batch * c * h * w, -1.f, 1.f, 31);
  const auto r = anycl::test::random_floats(batch * c * g.out_h * g.out_w, -1.f, 1.f, 32);
  const auto fd = finite_differences(
      x, r, [&](const std::vector<double>& xx) { return anycl::reference::avgpool_forward(g, xx, batch); });
  anycl::StepContext ctx;
  anycl::Tensor y = pool.forward(anycl::Tensor::from_host(rt, {batch, c * h * w}, x), ctx);
  auto dy = anycl::Tensor::from_host(rt, y.shape(), r);
  anycl::test::check_close(pool.backward(dy, ctx, true).download(), fd, 1e-6, 1e-4,
                           "avgpool dx vs finite differences");
}

TEST_CASE("GlobalAveragePooling2D and GlobalMaxPooling2D match the host reference and finite differences") {
  auto& rt = anycl::test::runtime();
  unsigned seed = 2800;
  for (const bool max : {false, true}) {
    for (const bool ties : {false, true}) {
      CAPTURE(max);
      CAPTURE(ties);
      const size_t batch = 3, c = 4, h = 5, w = 3, plane = h * w;
      anycl::GlobalPool2D pool(max);
      CHECK(pool.output_shape({c, h, w}) == anycl::Shape{c});
      pool.build(rt, {c, h, w}, batch, {}, {}, 0);
      auto x = anycl::test::random_floats(batch * c * plane, -1.f, 1.f, seed++);
      if (ties)
        for (float& v : x) v = std::round(v);  // the first maximum of a plane wins
      anycl::StepContext ctx;
      ctx.training = true;
      pool.forward(
          anycl::Tensor::from_host(rt, {batch, c * plane}, std::vector<float>(x.size(), std::nanf(""))), ctx);
      anycl::Tensor y = pool.forward(anycl::Tensor::from_host(rt, {batch, c * plane}, x), ctx);
      CHECK(y.shape() == std::vector<size_t>{batch, c});
      anycl::test::check_close(y.download(), anycl::reference::global_pool_forward(max, x, batch * c, plane),
                               1e-7, 1e-6, "global pool forward");
      const auto r = anycl::test::random_floats(batch * c, -1.f, 1.f, seed++);
      auto dy = anycl::Tensor::from_host(rt, y.shape(), r);
      const std::vector<float> dx = pool.backward(dy, ctx, true).download();
      anycl::test::check_close(dx, anycl::reference::global_pool_backward(max, x, r, plane), 1e-7, 1e-6,
                               "global pool backward");
      if (ties) continue;  // finite differences need a unique maximum
      const auto fd = finite_differences(x, r, [&](const std::vector<double>& xx) {
        return anycl::reference::global_pool_forward(max, xx, batch * c, plane);
      });
      anycl::test::check_close(dx, fd, 1e-6, 1e-4, "global pool dx vs finite differences");
    }
  }
}

TEST_CASE("pooling layers' tokens, model-file text and refusals") {
  anycl::ModelFlags flags;
  flags.layers = "conv4x3,avgpool2,conv6x3same,globalavgpool,8";
  flags.dropout = 0;
  const anycl::ModelSpec spec = anycl::model_from_flags(flags, anycl::Shape{1, 10, 10}, 3);
  REQUIRE(spec.layers.size() == 6);
  CHECK(spec.layers[1] == anycl::LayerSpec{"avgpool2d", "2 2"});
  CHECK(spec.layers[3] == anycl::LayerSpec{"globalavgpool2d", ""});
  CHECK(anycl::Sequential(spec).summary().find("GlobalAveragePooling2D") != std::string::npos);
  flags.layers = "conv4x3,avgpool3s2,globalmaxpool,8";
  const anycl::ModelSpec more = anycl::model_from_flags(flags, anycl::Shape{1, 10, 10}, 3);
  CHECK(more.layers[1] == anycl::LayerSpec{"avgpool2d", "3 2"});
  CHECK(more.layers[2] == anycl::LayerSpec{"globalmaxpool2d", ""});
  for (const char* bad : {"avgpool0", "avgpool2s0", "avgpoolx"}) {
    flags.layers = bad;
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(anycl::model_from_flags(flags, anycl::Shape{1, 10, 10}, 3),
                         doctest::Contains("avgpool"), anycl::ValidationError);
  }
  CHECK_THROWS_WITH_AS(anycl::GlobalPool2D(false).output_shape({12}), doctest::Contains("image inputs"),
                       anycl::ValidationError);
  CHECK_THROWS_WITH_AS(anycl::AvgPool2D(3, 3).output_shape({1, 2, 5}), doctest::Contains("less than 1×1"),
                       anycl::ValidationError);
  CHECK_THROWS_AS(anycl::make_layer({"globalmaxpool2d", "2"}), anycl::ValidationError);
  CHECK_THROWS_AS(anycl::make_layer({"avgpool2d", "2"}), anycl::ValidationError);
}
