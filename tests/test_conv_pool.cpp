// A Conv2D and the MaxPool2D after it, fused on CPU drivers: forward, Winograd's output stage pools 2×2
// windows in registers (the bits and argmax of its output stage then maxpool_forward); backward, the
// output stage routes the pool's gradient (conv_pool.cl: the dz bits of maxpool_backward then
// conv_output_backward, every element written, pixels in no window included, and the same bias gradient).
// In a model Sequential links the two where the pool's windows do not overlap (a small CNN against the
// host reference: test_cnn.cpp).
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <anycl/error.hpp>
#include <anycl/nn/conv2d.hpp>
#include <anycl/nn/maxpool2d.hpp>
#include <anycl/nn/sequential.hpp>

#include <cmath>

#include "helpers.hpp"
#include "ops/activation.hpp"
#include "ops/conv.hpp"
#include "ops/conv_winograd.hpp"
#include "ops/pool.hpp"

using anycl::Activation;

namespace {

// The row kernels on any driver (Oclgrind's included, which checks these kernels), as on a CPU driver.
struct RowKernels {
  anycl::Runtime& rt;
  bool before = rt.row_kernels();
  explicit RowKernels(anycl::Runtime& r) : rt(r) { rt.set_row_kernels(true); }
  ~RowKernels() { rt.set_row_kernels(before); }
};

struct Case {
  size_t batch, filters, h, w, pool;
};
// Whole windows; odd sizes (a last row and column in no window); 3×3 windows (the general loop); a plane
// of the reference CNN's conv 2 (24 × 24 under 2 × 2) for a few images.
const Case kCases[] = {{3, 4, 6, 6, 2}, {2, 3, 7, 5, 2}, {2, 2, 9, 7, 3}, {3, 5, 24, 24, 2}};

}  // namespace

TEST_CASE("conv_output_backward_pooled gives the bits of maxpool_backward then conv_output_backward") {
  auto& rt = anycl::test::runtime();
  const RowKernels row_kernels(rt);
  anycl::ConvOps ops(rt);
  REQUIRE(ops.pools_in_output_stage());
  anycl::MaxPoolOp pool(rt);
  anycl::BiasActivation bias_act(rt);
  unsigned seed = 700;
  for (const Case c : kCases)
    for (Activation act : {Activation::linear, Activation::relu, Activation::tanh, Activation::sigmoid,
                           Activation::leaky_relu, Activation::elu}) {
      const std::string what = fmt::format("{} batch {} filters {} {}×{} pool {}", anycl::to_string(act),
                                           c.batch, c.filters, c.h, c.w, c.pool);
      CAPTURE(what);
      const size_t plane = c.h * c.w, n = c.batch * c.filters * plane;
      const anycl::ConvGeometry g = anycl::Conv2D(c.filters, 1).geometry({1, c.h, c.w});
      const anycl::PoolGeometry pg = anycl::MaxPool2D(c.pool, c.pool).geometry({c.filters, c.h, c.w});
      // y as the layer's forward leaves it (activated: relu's zeros tie in their windows), then the pool.
      auto y = anycl::Tensor::from_host(rt, {c.batch, c.filters * plane},
                                        anycl::test::random_floats(n, -2.f, 2.f, seed++));
      bias_act.forward(
          y, anycl::Tensor::from_host(rt, {c.filters * plane}, std::vector<float>(c.filters * plane, 0.f)),
          act);
      anycl::Tensor pooled(rt, {c.batch, c.filters, pg.out_h, pg.out_w});
      anycl::Tensor arg(rt, {c.batch, c.filters, pg.out_h, pg.out_w}, anycl::DType::i32);
      pool.forward(y, pooled, arg, pg);
      const size_t pooled_n = pooled.size();
      // The pooled gradient as a view two rows into a larger tensor (its offset is an argument).
      anycl::Tensor dy_all(rt, {c.batch + 2, c.filters * pg.out_h * pg.out_w});
      dy_all.fill(std::nanf(""));
      anycl::Tensor dy_pool = dy_all.rows(2, c.batch);
      dy_pool.upload(anycl::test::random_floats(pooled_n, -1.f, 1.f, seed++));

      // Fused: dz over a NaN-filled buffer, so that an element it does not write shows.
      anycl::Tensor dz(rt, {c.filters, c.batch * plane}), db(rt, {c.filters});
      dz.fill(std::nanf(""));
      db.fill(std::nanf(""));
      ops.pooled_output_backward(pooled, arg, dy_pool, dz, db, g, c.pool, act);
      // The two passes it replaces.
      anycl::Tensor dx(rt, {c.batch, c.filters * plane}), dz2(rt, {c.filters, c.batch * plane}),
          db2(rt, {c.filters});
      pool.backward(dy_pool, arg, dx, pg);
      ops.output_backward(y, dx, dz2, db2, g, act);

      anycl::test::check_close(dz.download(), dz2.download(), 0, 0, "dz");
      // dbias: the same terms (the pooled values, zeros left out) summed in another order.
      anycl::test::check_close(db.download(), db2.download(), 1e-6, 1e-5, "dbias");
    }
}

TEST_CASE(
    "a Conv2D's backward takes the MaxPool2D's gradient after it only where the windows do not overlap") {
  auto& rt = anycl::test::runtime();
  const bool cpu_driver = anycl::ConvOps(rt).pools_in_output_stage();
  struct Pair {
    size_t size, stride;
    Activation act;
    bool fused;
  };
  for (const Pair p : {Pair{2, 2, Activation::relu, cpu_driver}, Pair{3, 3, Activation::elu, cpu_driver},
                       Pair{3, 2, Activation::relu, false}, Pair{1, 1, Activation::relu, false},
                       Pair{2, 2, Activation::gelu, false}}) {
    CAPTURE(p.size);
    CAPTURE(p.stride);
    const std::string act = anycl::to_string(p.act);
    CAPTURE(act);
    anycl::Conv2D conv(3, 3, 1, anycl::Padding::valid, p.act);
    const anycl::Shape in{2, 9, 9};
    const size_t n = conv.parameter_count(in);
    conv.build(rt, in, 4, anycl::Tensor(rt, {n}), anycl::Tensor(rt, {n}), 0);
    CHECK(conv.takes_pool_gradient(anycl::MaxPool2D(p.size, p.stride)) == p.fused);
  }
}

TEST_CASE("winograd_output_rows_pooled gives the bits and argmax of the output stage then maxpool_forward") {
  auto& rt = anycl::test::runtime();
  const RowKernels row_kernels(rt);
  anycl::ConvWinogradOps winograd(rt);
  REQUIRE(winograd.pools_output());
  anycl::MaxPoolOp pool(rt);
  struct Image {
    size_t c, h, w;
    anycl::Padding padding;
  };
  // Outputs of 24 × 24 (the reference CNN's conv 2: four-block chunks, the last overlapping), 6 × 6 (block by
  // block), 7 × 5 (a last row and column in no window), 17 × 18 (chunks, then a block of one or two columns)
  // and 26 wide (six whole blocks, a seventh of two columns).
  for (const Image im : {Image{3, 26, 26, anycl::Padding::valid}, Image{2, 6, 6, anycl::Padding::same},
                         Image{2, 7, 5, anycl::Padding::same}, Image{1, 19, 20, anycl::Padding::valid},
                         Image{2, 4, 26, anycl::Padding::same}})
    for (Activation act : {Activation::linear, Activation::relu, Activation::tanh, Activation::sigmoid,
                           Activation::leaky_relu, Activation::elu}) {
      const size_t batch = 3, filters = 5;
      const anycl::Conv2D shape_of(filters, 3, 1, im.padding, act);
      const anycl::ConvGeometry g = shape_of.geometry({im.c, im.h, im.w});
      const std::string what = fmt::format("{} out {}×{}", anycl::to_string(act), g.out_h, g.out_w);
      CAPTURE(what);
      const anycl::PoolGeometry pg = anycl::MaxPool2D(2, 2).geometry({filters, g.out_h, g.out_w});
      unsigned seed = 900 + unsigned(g.out_h * 31 + g.out_w) + 7 * unsigned(act);
      const auto x =
          anycl::Tensor::from_host(rt, {batch, im.c * im.h * im.w},
                                   anycl::test::random_floats(batch * im.c * im.h * im.w, -1, 1, seed));
      const auto w = anycl::Tensor::from_host(
          rt, {filters, g.patch()}, anycl::test::random_floats(filters * g.patch(), -0.5, 0.5, seed + 1));
      const auto bias =
          anycl::Tensor::from_host(rt, {filters}, anycl::test::random_floats(filters, -0.2f, 0.2f, seed + 2));
      const size_t windows = batch * filters * pg.out_h * pg.out_w;
      // Fused, over NaN and -1 so that a window it does not write shows.
      anycl::Tensor pooled(rt, {batch, filters * pg.out_h * pg.out_w}), arg(rt, {windows}, anycl::DType::i32);
      pooled.fill(std::nanf(""));
      arg.upload(std::vector<int32_t>(windows, -1));
      winograd.forward_pooled(x, w, bias, pooled, arg, g, act);
      // The output stage, then the pool.
      anycl::Tensor y(rt, {batch, filters * g.plane()}), pooled2(rt, {batch, filters, pg.out_h, pg.out_w}),
          arg2(rt, {windows}, anycl::DType::i32);
      winograd.forward(x, w, bias, y, g, act);
      pool.forward(y, pooled2, arg2, pg);
      anycl::test::check_close(pooled.download(), pooled2.download(), 0, 0, "pooled");
      const auto at = arg.download_i32(), at2 = arg2.download_i32();
      size_t wrong = 0;
      for (size_t i = 0; i < windows; ++i) wrong += at[i] != at2[i];
      CHECK_MESSAGE(wrong == 0, wrong, " of ", windows, " argmax differ");
    }
}

TEST_CASE(
    "in a model the fused Conv2D and MaxPool2D give the pool's output, and the layer refuses its own "
    "gradient "
    "after it") {
  auto& rt = anycl::test::runtime();
  anycl::Sequential model(anycl::Shape{4, 10, 10});  // a patch of 36: Winograd's on a CPU
  model.conv2d(4, 3).max_pool2d(2).flatten().dense(3);
  model.build(rt, 2);
  model.initialize(5);
  const auto x = anycl::Tensor::from_host(rt, {2, 400}, anycl::test::random_floats(800, 0, 1, 11));
  anycl::StepContext ctx;
  ctx.training = true;
  model.forward(x, ctx);
  auto& conv = dynamic_cast<anycl::Conv2D&>(*model.layers().at(0));
  auto& pool = dynamic_cast<anycl::MaxPool2D&>(*model.layers().at(1));
  // The same layers called one by one give what the model's fused step pooled.
  const anycl::StepContext infer;
  const auto fused = model.forward(x, infer).download();
  anycl::Tensor y = conv.forward(x, infer);
  const auto pooled = pool.forward(y, infer).download();
  auto dense_in = anycl::Tensor::from_host(rt, {2, 64}, pooled);
  const auto one_by_one = model.layers().at(3)->forward(dense_in, infer).download();
  anycl::test::check_close(fused, one_by_one, 0, 0, "the model's output");
  // Where the pool runs in conv's output stage (a CPU driver), conv's own y is not written then.
  CHECK(conv.pools_in_forward() == anycl::ConvOps(rt).pools_in_output_stage());
  if (conv.pools_in_forward()) {
    model.forward(x, ctx);
    anycl::Tensor dy(rt, {2, 4, 8, 8});
    dy.fill(1.f);
    CHECK_THROWS_WITH_AS(conv.backward(dy, ctx, true), doctest::Contains("pass the pool's gradient"),
                         anycl::ValidationError);
  }
}
