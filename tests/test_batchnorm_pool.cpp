// A BatchNormalization and the MaxPool2D after it, fused on the row forms' drivers (PoCL's CPU driver;
// batchnorm.cl's *_pooled kernels). Forward, the layer's pass pools its windows and writes only the
// pool's output and argmax: their bits against the batch-norm forward then maxpool_forward, training and
// inference. Backward, the layer takes the pool's gradient and argmax in place of the full-size gradient
// maxpool_backward writes (zero but at each window's argmax): against maxpool_backward then the batch-norm
// backward, dγ and dβ (the same terms in another order) and every element of dx, pixels in no window
// included. In a model Sequential links the two where the
// pool's windows do not overlap: the BatchNorm CNN's block, fused, against the same model unfused.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <anycl/error.hpp>
#include <anycl/nn/batchnorm.hpp>
#include <anycl/nn/maxpool2d.hpp>
#include <anycl/nn/sequential.hpp>

#include <cmath>
#include <memory>

#include "helpers.hpp"
#include "ops/batchnorm.hpp"
#include "ops/pool.hpp"

using anycl::Activation;

namespace {

// The row kernels on any driver (Oclgrind's included, which checks these kernels), as on a CPU driver.
struct RowKernels {
  anycl::Runtime& rt;
  bool before = rt.row_kernels();
  explicit RowKernels(anycl::Runtime& r, bool on = true) : rt(r) { rt.set_row_kernels(on); }
  ~RowKernels() { rt.set_row_kernels(before); }
};

struct Case {
  size_t batch, channels, h, w, pool;
};
// Whole windows; odd sizes (a last row and column in no window); 3×3 windows; a plane of the BatchNorm
// CNN's second BatchNormalization (24 × 24 under 2 × 2) for a few images.
const Case kCases[] = {{3, 4, 6, 6, 2}, {2, 3, 7, 5, 2}, {2, 2, 9, 7, 3}, {3, 5, 24, 24, 2}};

anycl::Tensor nan_filled(anycl::Runtime& rt, std::vector<size_t> shape) {
  anycl::Tensor t(rt, std::move(shape));
  t.fill(std::nanf(""));
  return t;
}

}  // namespace

TEST_CASE("batchnorm backward_pooled gives the results of maxpool_backward then the batch-norm backward") {
  auto& rt = anycl::test::runtime();
  const RowKernels row_kernels(rt);
  anycl::MaxPoolOp pool(rt);
  const float epsilon = 1e-3f;
  unsigned seed = 800;
  for (const Case c : kCases)
    for (Activation act : {Activation::linear, Activation::relu, Activation::tanh, Activation::sigmoid,
                           Activation::leaky_relu, Activation::elu, Activation::gelu}) {
      const std::string what = fmt::format("{} batch {} channels {} {}×{} pool {}", anycl::to_string(act),
                                           c.batch, c.channels, c.h, c.w, c.pool);
      CAPTURE(what);
      anycl::BatchNormOp op(rt, act);
      const anycl::BatchNormShape s{c.batch, c.channels, c.h * c.w};
      REQUIRE(op.pools_gradient(s.plane));
      const anycl::PoolGeometry pg = anycl::MaxPool2D(c.pool, c.pool).geometry({c.channels, c.h, c.w});
      const size_t pooled = pg.out_h * pg.out_w;
      auto x = anycl::Tensor::from_host(rt, {c.batch, c.channels * s.plane},
                                        anycl::test::random_floats(s.size(), -2.f, 3.f, seed++));
      std::vector<float> p = anycl::test::random_floats(2 * c.channels, 0.5f, 1.5f, seed++);  // γ
      const auto beta = anycl::test::random_floats(c.channels, -0.5f, 0.5f, seed++);
      std::copy(beta.begin(), beta.end(), p.begin() + long(c.channels));
      const auto params = anycl::Tensor::from_host(rt, {2 * c.channels}, p);
      anycl::Tensor stats(rt, {2 * c.channels}), y(rt, x.shape());
      op.train_forward(x, y, s, stats, nullptr, 0.9f, params, epsilon);
      anycl::Tensor pooled_y(rt, {c.batch, c.channels, pg.out_h, pg.out_w});
      anycl::Tensor arg(rt, {c.batch, c.channels, pg.out_h, pg.out_w}, anycl::DType::i32);
      pool.forward(y, pooled_y, arg, pg);
      // The pooled gradient as a view two rows into a larger tensor (its offset is an argument).
      anycl::Tensor dy_all = nan_filled(rt, {c.batch + 2, c.channels * pooled});
      anycl::Tensor dy_pool = dy_all.rows(2, c.batch);
      dy_pool.upload(anycl::test::random_floats(c.batch * c.channels * pooled, -1.f, 1.f, seed++));

      // The two passes it replaces.
      anycl::Tensor dy_full(rt, x.shape()), dx2(rt, x.shape()), grads2(rt, {2 * c.channels});
      pool.backward(dy_pool, arg, dy_full, pg);
      op.backward(x, dy_full, s, stats, params, epsilon, grads2, &dx2);
      // Fused, over NaN-filled buffers, so that an element it does not write shows; grads at an offset.
      anycl::Tensor grads_all = nan_filled(rt, {2 * c.channels + 3});
      anycl::Tensor grads = grads_all.rows(3, 2 * c.channels);
      anycl::Tensor dx = nan_filled(rt, x.shape());
      op.backward_pooled(x, dy_pool, arg, pooled, s, stats, params, epsilon, grads, &dx);
      // dγ and dβ: the same terms (the windows' maxima; the zeros left out) summed in another order; dx
      // from them.
      anycl::test::check_close(grads.download(), grads2.download(), 1e-5, 1e-4, "dgamma, dbeta");
      anycl::test::check_close(dx.download(), dx2.download(), 1e-5, 1e-4, "dx");
      // Without dx: the sums only.
      anycl::Tensor grads3 = nan_filled(rt, {2 * c.channels});
      op.backward_pooled(x, dy_pool, arg, pooled, s, stats, params, epsilon, grads3, nullptr);
      anycl::test::check_close(grads3.download(), grads.download(), 0, 0, "dgamma, dbeta without dx");
    }
}

TEST_CASE(
    "batchnorm forward_pooled gives the bits and argmax of the batch-norm forward then maxpool_forward") {
  auto& rt = anycl::test::runtime();
  const RowKernels row_kernels(rt);
  anycl::MaxPoolOp pool(rt);
  const float epsilon = 1e-3f;
  unsigned seed = 900;
  for (const Case c : kCases)
    for (Activation act : {Activation::linear, Activation::relu, Activation::tanh, Activation::sigmoid,
                           Activation::leaky_relu, Activation::elu, Activation::gelu}) {
      const std::string what = fmt::format("{} batch {} channels {} {}×{} pool {}", anycl::to_string(act),
                                           c.batch, c.channels, c.h, c.w, c.pool);
      CAPTURE(what);
      anycl::BatchNormOp op(rt, act);
      const anycl::BatchNormShape s{c.batch, c.channels, c.h * c.w};
      const anycl::PoolGeometry pg = anycl::MaxPool2D(c.pool, c.pool).geometry({c.channels, c.h, c.w});
      const std::vector<size_t> pooled_shape{c.batch, c.channels, pg.out_h, pg.out_w};
      // x as a view one row into a larger tensor; relu's zeros tie in their windows.
      anycl::Tensor x_all(rt, {c.batch + 1, c.channels * s.plane});
      x_all.upload(anycl::test::random_floats(x_all.size(), -2.f, 3.f, seed++));
      const anycl::Tensor x = x_all.rows(1, c.batch);
      std::vector<float> p = anycl::test::random_floats(2 * c.channels, 0.5f, 1.5f, seed++);
      const auto beta = anycl::test::random_floats(c.channels, -0.5f, 0.5f, seed++);
      std::copy(beta.begin(), beta.end(), p.begin() + long(c.channels));
      const auto params = anycl::Tensor::from_host(rt, {2 * c.channels}, p);
      const auto moving_start = anycl::test::random_floats(2 * c.channels, 0.5f, 1.5f, seed++);
      // The two passes it replaces: training, then inference on the moving statistics.
      anycl::Tensor stats(rt, {2 * c.channels}),
          moving = anycl::Tensor::from_host(rt, {2 * c.channels}, moving_start);
      anycl::Tensor y(rt, x.shape()), pooled_ref(rt, pooled_shape),
          arg_ref(rt, pooled_shape, anycl::DType::i32);
      op.train_forward(x, y, s, stats, &moving, 0.9f, params, epsilon);
      pool.forward(y, pooled_ref, arg_ref, pg);
      anycl::Tensor infer_y(rt, x.shape()), infer_ref(rt, pooled_shape),
          infer_arg_ref(rt, pooled_shape, anycl::DType::i32);
      op.forward(x, infer_y, s, moving, params, epsilon);
      pool.forward(infer_y, infer_ref, infer_arg_ref, pg);
      // Fused, over NaN-filled buffers.
      anycl::Tensor stats2 = nan_filled(rt, {2 * c.channels}),
                    moving2 = anycl::Tensor::from_host(rt, {2 * c.channels}, moving_start);
      anycl::Tensor pooled = nan_filled(rt, pooled_shape), arg(rt, pooled_shape, anycl::DType::i32);
      op.train_forward_pooled(x, pooled, arg, s, pg, stats2, &moving2, 0.9f, params, epsilon);
      anycl::test::check_close(stats2.download(), stats.download(), 0, 0, "the batch statistics");
      anycl::test::check_close(moving2.download(), moving.download(), 0, 0, "the moving statistics");
      anycl::test::check_close(pooled.download(), pooled_ref.download(), 0, 0, "the pooled values");
      CHECK(arg.download_i32() == arg_ref.download_i32());
      anycl::Tensor infer = nan_filled(rt, pooled_shape), infer_arg(rt, pooled_shape, anycl::DType::i32);
      op.forward_pooled(x, infer, infer_arg, s, pg, moving2, params, epsilon);
      anycl::test::check_close(infer.download(), infer_ref.download(), 0, 0, "the pooled values, inference");
      CHECK(infer_arg.download_i32() == infer_arg_ref.download_i32());
    }
}

TEST_CASE("batchnorm forward_pooled refuses windows or outputs that do not fit, the moving statistics kept") {
  auto& rt = anycl::test::runtime();
  const RowKernels row_kernels(rt);
  anycl::BatchNormOp op(rt, Activation::relu);
  const anycl::BatchNormShape s{2, 3, 36};  // 6 × 6 planes
  const std::vector<float> moving_start{0, 0, 0, 1, 1, 1};
  anycl::Tensor x(rt, {2, 108}), stats(rt, {6}), params(rt, {6});
  x.fill(1.f);
  params.fill(1.f);
  anycl::Tensor moving = anycl::Tensor::from_host(rt, {6}, moving_start);
  const anycl::PoolGeometry pg = anycl::MaxPool2D(2, 2).geometry({3, 6, 6});
  const anycl::PoolGeometry overlapping = anycl::MaxPool2D(3, 2).geometry({3, 6, 6});
  anycl::Tensor pooled(rt, {2, 27}), arg(rt, {2, 27}, anycl::DType::i32), short_pooled(rt, {2, 26});
  CHECK_THROWS_WITH_AS(
      op.train_forward_pooled(x, short_pooled, arg, s, pg, stats, &moving, 0.9f, params, 1e-3f),
      doctest::Contains("do not fit"), anycl::ValidationError);
  CHECK_THROWS_WITH_AS(
      op.train_forward_pooled(x, pooled, arg, s, overlapping, stats, &moving, 0.9f, params, 1e-3f),
      doctest::Contains("windows of 3 moved by 2"), anycl::ValidationError);
  CHECK(moving.download() == moving_start);
  op.train_forward_pooled(x, pooled, arg, s, pg, stats, &moving, 0.9f, params, 1e-3f);
  CHECK(moving.download() != moving_start);
}

TEST_CASE("batchnorm backward_pooled refuses a gradient or argmax of the wrong size, with the reason") {
  auto& rt = anycl::test::runtime();
  const RowKernels row_kernels(rt);
  anycl::BatchNormOp op(rt, Activation::relu);
  const anycl::BatchNormShape s{2, 3, 36};  // 6 × 6 planes under 2 × 2 windows: 9 a plane
  anycl::Tensor x(rt, {2, 108}), dx(rt, {2, 108}), stats(rt, {6}), params(rt, {6}), grads(rt, {6});
  anycl::Tensor dyp(rt, {2, 27}), arg(rt, {2, 27}, anycl::DType::i32), short_dyp(rt, {2, 26});
  anycl::Tensor float_arg(rt, {2, 27});
  CHECK_THROWS_WITH_AS(op.backward_pooled(x, short_dyp, arg, 9, s, stats, params, 1e-3f, grads, &dx),
                       doctest::Contains("dy"), anycl::ValidationError);
  CHECK_THROWS_WITH_AS(op.backward_pooled(x, dyp, float_arg, 9, s, stats, params, 1e-3f, grads, &dx),
                       doctest::Contains("is not i32"), anycl::ValidationError);
  const anycl::BatchNormShape small{2, 3, 4};  // a plane of 4: no row form
  anycl::Tensor x_small(rt, {2, 12}), dyp_small(rt, {2, 3}), arg_small(rt, {2, 3}, anycl::DType::i32);
  CHECK_THROWS_WITH_AS(
      op.backward_pooled(x_small, dyp_small, arg_small, 1, small, stats, params, 1e-3f, grads, nullptr),
      doctest::Contains("a plane of at least 8"), anycl::ValidationError);
}

TEST_CASE(
    "a BatchNormalization takes the MaxPool2D's gradient after it only where the windows do not overlap") {
  auto& rt = anycl::test::runtime();
  for (const bool rows : {true, false}) {
    CAPTURE(rows);
    const RowKernels row_kernels(rt, rows);
    struct Pair {
      anycl::Shape in;
      size_t size, stride;
      bool fused;
    };
    for (const Pair& p :
         {Pair{{2, 9, 9}, 2, 2, rows}, Pair{{2, 9, 9}, 3, 3, rows}, Pair{{2, 9, 9}, 3, 2, false},
          Pair{{2, 9, 9}, 1, 1, false}, Pair{{2, 2, 3}, 2, 2, false}, Pair{{5}, 2, 2, false}}) {
      CAPTURE(p.size);
      CAPTURE(p.stride);
      const std::string in = anycl::shape_string(p.in);
      CAPTURE(in);
      anycl::BatchNormalization bn(0.9f, 1e-3f, Activation::relu);
      const size_t n = bn.parameter_count(p.in);
      bn.build(rt, p.in, 4, anycl::Tensor(rt, {n}), anycl::Tensor(rt, {n}), 0);
      CHECK(bn.takes_pool_gradient(anycl::MaxPool2D(p.size, p.stride)) == p.fused);
    }
  }
}

TEST_CASE("in a model the fused BatchNormalization and MaxPool2D give the gradients of the layers unfused") {
  auto& rt = anycl::test::runtime();
  // The BatchNorm CNN's block (Conv2D linear → BatchNormalization relu → MaxPool2D 2), then Dense; once
  // with the row forms (linked: the pool's backward in the batch norm's), once without (not linked).
  const size_t batch = 3;
  const auto x = anycl::test::random_floats(batch * 2 * 11 * 11, 0.f, 1.f, 21);
  const auto dlogits = anycl::test::random_floats(batch * 3, -1.f, 1.f, 22);
  std::vector<std::vector<float>> grads, outputs;
  for (const bool rows : {true, false}) {
    CAPTURE(rows);
    const RowKernels row_kernels(rt, rows);
    anycl::Sequential model(anycl::Shape{2, 11, 11});
    model.conv2d(4, 3, Activation::linear)
        .add(std::make_unique<anycl::BatchNormalization>(0.9f, 1e-3f, Activation::relu))
        .max_pool2d(2)
        .flatten()
        .dense(3);
    model.build(rt, batch);
    model.initialize(5);
    auto& bn = dynamic_cast<anycl::BatchNormalization&>(*model.layers().at(1));
    CHECK(bn.takes_pool_gradient(dynamic_cast<anycl::MaxPool2D&>(*model.layers().at(2))) == rows);
    CHECK(bn.pools_in_forward() == rows);
    anycl::StepContext ctx;
    ctx.training = true;
    outputs.push_back(model.forward(anycl::Tensor::from_host(rt, {batch, 242}, x), ctx).download());
    const anycl::StepContext infer;  // on the moving statistics the step folded the batch's into
    outputs.push_back(model.forward(anycl::Tensor::from_host(rt, {batch, 242}, x), infer).download());
    model.forward(anycl::Tensor::from_host(rt, {batch, 242}, x), ctx);  // the training pass again: backward's
    auto dl = anycl::Tensor::from_host(rt, {batch, 3}, dlogits);
    model.gradients().fill(std::nanf(""));
    model.backward(dl, ctx);
    grads.push_back(model.gradients().download());
    if (rows) {  // the layer called with its own (full-size) gradient still takes the unfused path
      anycl::Tensor dy(rt, {batch, 4 * 9 * 9});
      dy.fill(0.5f);
      CHECK(bn.backward(dy, ctx, true).shape() == dy.shape());
    }
  }
  anycl::test::check_close(outputs[0], outputs[2], 1e-5, 1e-4, "the model's output");
  anycl::test::check_close(outputs[1], outputs[3], 1e-5, 1e-4, "the model's output, inference");
  anycl::test::check_close(grads[0], grads[1], 1e-4, 1e-4, "every parameter's gradient");
}
