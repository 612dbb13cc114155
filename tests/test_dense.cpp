// Dense's backward through each activation against finite differences of a plain double forward:
// a two-layer model (Dense(act) → Dense linear), all parameters. gelu checks that the layer keeps its
// pre-activation z for the backward (its derivative is no function of the output); and with a
// Dropout after the Dense (the fused stages, which a gelu Dense leaves to the Dropout).
#include <doctest/doctest.h>
#include <anycl/blas/tuning.hpp>
#include <anycl/nn/sequential.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "blas/gemm_plan.hpp"
#include "helpers.hpp"
#include "indirect_gemm.hpp"
#include "reference/activation.hpp"
#include "reference/dropout.hpp"

using anycl::Activation;

TEST_CASE("Dense backward agrees with finite differences for every activation") {
  auto& rt = anycl::test::runtime();
  const size_t rows = 4, in = 5, hidden = 6, out = 3;
  const auto x = anycl::test::random_floats(rows * in, -1.5f, 1.5f, 31);
  const auto r = anycl::test::random_floats(rows * out, -1.f, 1.f, 32);
  for (const Activation act : {Activation::linear, Activation::relu, Activation::tanh, Activation::sigmoid,
                               Activation::leaky_relu, Activation::elu, Activation::gelu}) {
    const std::string name = anycl::to_string(act);
    CAPTURE(name);
    anycl::Sequential model(in);
    model.dense(hidden, act).dense(out);
    model.build(rt, rows);
    model.initialize(5);
    const std::vector<float> p = model.parameters().download();
    // L = Σ r·(act(x·W1 + b1)·W2 + b2), parameters laid out W1 (in, hidden), b1, W2 (hidden, out), b2.
    auto loss = [&](const std::vector<double>& q) {
      const double *w1 = q.data(), *b1 = w1 + in * hidden, *w2 = b1 + hidden, *b2 = w2 + hidden * out;
      double sum = 0;
      for (size_t s = 0; s < rows; ++s) {
        std::vector<double> h(hidden);
        for (size_t j = 0; j < hidden; ++j) {
          double z = b1[j];
          for (size_t i = 0; i < in; ++i) z += double(x[s * in + i]) * w1[i * hidden + j];
          h[j] = anycl::reference::activate(z, act);
        }
        for (size_t k = 0; k < out; ++k) {
          double y = b2[k];
          for (size_t j = 0; j < hidden; ++j) y += h[j] * w2[j * out + k];
          sum += double(r[s * out + k]) * y;
        }
      }
      return sum;
    };
    const std::vector<double> pd(p.begin(), p.end());
    std::vector<float> fd(p.size());
    const double step = 1e-5;
    for (size_t i = 0; i < p.size(); ++i) {
      auto a = pd, b = pd;
      a[i] += step, b[i] -= step;
      fd[i] = float((loss(a) - loss(b)) / (2 * step));
    }
    anycl::StepContext ctx;
    ctx.training = true;
    model.forward(anycl::Tensor::from_host(rt, {rows, in}, x), ctx);
    auto dy = anycl::Tensor::from_host(rt, {rows, out}, r);
    model.backward(dy, ctx);
    anycl::test::check_close(model.gradients().download(), fd, 1e-4, 1e-3, "gradients vs finite differences");
  }
}

TEST_CASE(
    "Dense then Dropout (the fused stages - gelu keeps z and runs its own pass) agrees with finite "
    "differences") {
  auto& rt = anycl::test::runtime();
  const size_t rows = 4, in = 5, hidden = 6, out = 3;
  const auto x = anycl::test::random_floats(rows * in, -1.5f, 1.5f, 41);
  const auto r = anycl::test::random_floats(rows * out, -1.f, 1.f, 42);
  const anycl::StepContext ctx{true, 1234, 6, 11};
  // The mask the Dropout after layer 0 applies (stream: base + its layer index 1), as a factor per element.
  const anycl::DropoutMask m{0.4f, ctx.seed, ctx.step, 0x10000u + 1, ctx.row_base};
  std::vector<float> factor(rows * hidden);
  anycl::reference::dropout_forward(std::vector<float>(rows * hidden, 1.f).data(), factor.data(), rows,
                                    hidden, m);
  for (const Activation act : {Activation::relu, Activation::elu, Activation::gelu}) {
    const std::string name = anycl::to_string(act);
    CAPTURE(name);
    anycl::Sequential model(in);
    model.dense(hidden, act).dropout(0.4f).dense(out);
    model.build(rt, rows);
    model.initialize(5);
    const std::vector<float> p = model.parameters().download();
    auto loss = [&](const std::vector<double>& q) {
      const double *w1 = q.data(), *b1 = w1 + in * hidden, *w2 = b1 + hidden, *b2 = w2 + hidden * out;
      double sum = 0;
      for (size_t s = 0; s < rows; ++s)
        for (size_t k = 0; k < out; ++k) {
          double y = b2[k];
          for (size_t j = 0; j < hidden; ++j) {
            double z = b1[j];
            for (size_t i = 0; i < in; ++i) z += double(x[s * in + i]) * w1[i * hidden + j];
            y += anycl::reference::activate(z, act) * double(factor[s * hidden + j]) * w2[j * out + k];
          }
          sum += double(r[s * out + k]) * y;
        }
      return sum;
    };
    const std::vector<double> pd(p.begin(), p.end());
    std::vector<float> fd(p.size());
    for (size_t i = 0; i < p.size(); ++i) {
      auto a = pd, b = pd;
      a[i] += 1e-5, b[i] -= 1e-5;
      fd[i] = float((loss(a) - loss(b)) / 2e-5);
    }
    model.forward(anycl::Tensor::from_host(rt, {rows, in}, x), ctx);
    auto dy = anycl::Tensor::from_host(rt, {rows, out}, r);
    model.backward(dy, ctx);
    anycl::test::check_close(model.gradients().download(), fd, 1e-4, 1e-3, "gradients vs finite differences");
  }
}

namespace {
// Dense(out, relu) over rows × in inputs on `rt` against the host's sums, and a rerun's bits.
void check_dense_forward(anycl::Runtime& rt, size_t rows, size_t in, size_t out) {
  anycl::Sequential model(in);
  model.dense(out, Activation::relu);
  model.build(rt, rows);
  model.initialize(9);
  const std::vector<float> p = model.parameters().download();
  const auto x = anycl::test::random_floats(rows * in, -1.f, 1.f, 43);
  const anycl::StepContext ctx{true, 1, 0, 0};
  const auto xt = anycl::Tensor::from_host(rt, {rows, in}, x);
  const std::vector<float> y = model.forward(xt, ctx).download();
  CHECK(model.forward(xt, ctx).download() == y);
  std::vector<float> want(rows * out);
  for (size_t s = 0; s < rows; ++s)
    for (size_t j = 0; j < out; ++j) {
      double z = p[in * out + j];
      for (size_t i = 0; i < in; ++i) z += double(x[s * in + i]) * p[i * out + j];
      want[s * out + j] = float(std::max(z, 0.0));
    }
  anycl::test::check_close(y, want, 1e-4, 1e-4, "split forward vs host");
}

// An Xgemm set of 96-wide tiles (as PoCL's AVX-512 `large` sets), on the indirect kernel's GEMMK=0 form.
void apply_wide_tiles(anycl::Runtime& rt) {
  anycl::GemmTuning wide;
  wide.kernels["Xgemm"] = {{"GEMMK", 0}, {"KREG", 1},   {"KWG", 16},  {"KWI", 2},  {"MDIMA", 4}, {"MDIMC", 4},
                           {"MWG", 96},  {"NDIMB", 16}, {"NDIMC", 8}, {"NWG", 64}, {"SA", 0},    {"SB", 0},
                           {"STRM", 1},  {"STRN", 1},   {"VWM", 8},   {"VWN", 4}};
  anycl::apply_tuning(rt, wide);
}
}  // namespace

// A product of few output tiles and a long inner size (the reference CNN's first Dense layer) runs as
// slices of k, one strided-batched GEMM and an ordered sum (the GEMM planner's split_k_slices, on a
// CPU and where Dense asks CLBlast's indirect kernel for a TN product): the host's sums to fp32
// rounding, and the same bits on a rerun.
TEST_CASE("Dense forward split over its inner size agrees with the host and reruns bit-identically") {
  auto& rt = anycl::test::runtime();
  if (rt.info().type != anycl::DeviceType::cpu) ANYCL_SKIP_TEST(Missing::capability, "split-K is for CPUs");
  const anycl::test::IndirectGemmScope indirect(rt);
  const size_t rows = 64, in = 2048, out = 32;
  REQUIRE(anycl::detail::split_k_slices(rt, rows, out, in) > 1);
  check_dense_forward(rt, rows, in, out);
}

// The same where the units are not whole tiles of the kernel (PoCL's AVX-512 `large` sets: 96 wide)
// but the batch, padded, can be: the split turned round (split_k_transposed), its slices summed back
// transposed. The reference CNN's 128 × 128, its batch padded to 192.
TEST_CASE("Dense forward split turned round agrees with the host and reruns bit-identically") {
  auto& rt = anycl::test::runtime();
  if (rt.info().type != anycl::DeviceType::cpu) ANYCL_SKIP_TEST(Missing::capability, "split-K is for CPUs");
  const anycl::test::IndirectGemmScope indirect(rt);  // restores CLBlast's parameters after
  apply_wide_tiles(rt);
  const size_t rows = 128, in = 4096, out = 128;
  CHECK(anycl::detail::split_k_slices(rt, rows, out, in) == 1);
  const anycl::detail::SplitKTransposed turned = anycl::detail::split_k_transposed(rt, rows, out, in);
  REQUIRE(turned.slices > 1);
  CHECK(turned.padded_m == 192);
  check_dense_forward(rt, rows, in, out);
}

// A tuning's `anyclDenseXgemm` line (PoCL's AVX-512 entry's, for the reference CNN's first Dense layer):
// the forward product on an Xgemm set of its own (DenseForwardGemmScope), laid out for that set's
// tiles, and the model's set back for everything after it. On the model's 96-wide tiles the batch of
// 128 is padded to 192 (split turned round); on the Dense set's 128 × 64 ones it is whole (split as it
// is, on a CPU). The host's sums either way.
TEST_CASE("Dense forward on its own Xgemm set (anyclDenseXgemm) agrees with the host") {
  auto& rt = anycl::test::runtime();
  const anycl::test::IndirectGemmScope indirect(rt);  // restores CLBlast's parameters after
  struct NoDenseSet {
    anycl::Runtime& rt;
    ~NoDenseSet() { anycl::detail::gemm_state(rt).dense_xgemm.clear(); }
  } no_dense_set{rt};
  apply_wide_tiles(rt);
  const std::map<std::string, size_t> model_set = anycl::test::current_xgemm(rt);
  std::map<std::string, size_t> dense_set = model_set;
  dense_set["MWG"] = 128, dense_set["MDIMA"] = 16, dense_set["MDIMC"] = 8;  // 128 × 64 tiles
  const size_t rows = 128, in = 4096, out = 128;
  const bool cpu = rt.info().type == anycl::DeviceType::cpu;
  for (const bool own : {false, true}) {
    CAPTURE(own);
    anycl::GemmTuning line;
    line.kernels[anycl::detail::kDenseXgemm] = own ? dense_set : std::map<std::string, size_t>{};
    anycl::apply_tuning(rt, line);
    {  // the scope: the Dense set while it lives (a scope inside it changes nothing), the model's after
      const anycl::detail::DenseForwardGemmScope outer(rt, rows, out);
      CHECK(anycl::test::current_xgemm(rt) == (own ? dense_set : model_set));
      { const anycl::detail::DenseForwardGemmScope inner(rt, rows, out); }
      CHECK(anycl::test::current_xgemm(rt) == (own ? dense_set : model_set));
      if (cpu) {
        CHECK((anycl::detail::split_k_transposed(rt, rows, out, in).slices > 1) == !own);
        CHECK((anycl::detail::split_k_slices(rt, rows, out, in) > 1) == own);
      }
    }
    // Products the Dense set would not make whole (10 units), or the model's set already does (192 × 64),
    // stay on the model's set.
    for (const auto& [batch, units] : {std::pair<size_t, size_t>{128, 10}, {192, 64}}) {
      const anycl::detail::DenseForwardGemmScope other(rt, batch, units);
      CHECK(anycl::test::current_xgemm(rt) == model_set);
    }
    check_dense_forward(rt, rows, in, out);
    CHECK(anycl::test::current_xgemm(rt) ==
          model_set);  // the backward pass and every later GEMM on the model's set
  }
}

// dW = xᵀ·dz of 128 units on 96-wide tiles, which CLBlast would pad and copy, runs turned round
// (dense_dw_turned): dWᵀ = dzᵀ·x on tiles that fit, then anycl's transpose. The host's sums to fp32
// rounding, db beside it, and the same bits on a rerun.
TEST_CASE("Dense weight gradient turned round agrees with the host and reruns bit-identically") {
  auto& rt = anycl::test::runtime();
  const anycl::test::IndirectGemmScope indirect(rt);
  apply_wide_tiles(rt);
  const size_t rows = 128, in = 960, out = 128;
  REQUIRE(anycl::detail::dense_dw_turned(rt, rows, in, out));
  CHECK_FALSE(anycl::detail::dense_dw_turned(rt, rows, in, 192));  // whole tiles: as it is
  anycl::Sequential model(in);
  model.dense(out);  // linear: dz = dy
  model.build(rt, rows);
  model.initialize(9);
  // The tuner times dW as training runs it: dWᵀ's product, units × in over the batch.
  const auto shapes = anycl::model_gemm_shapes(model, rows, &rt);
  const auto dw = std::find_if(shapes.begin(), shapes.end(), [](const auto& s) { return s.label == "dW 1"; });
  REQUIRE(dw != shapes.end());
  CHECK(dw->m == out);
  CHECK(dw->n == in);
  CHECK(dw->k == rows);
  const size_t weights = in * out;
  const auto x = anycl::test::random_floats(rows * in, -1.f, 1.f, 44);
  const auto dz = anycl::test::random_floats(rows * out, -1.f, 1.f, 45);
  const anycl::StepContext ctx{true, 1, 0, 0};
  const auto xt = anycl::Tensor::from_host(rt, {rows, in}, x);
  auto backward = [&] {
    model.gradients().fill(std::nanf(""));  // a gradient the pass leaves out stays NaN
    model.forward(xt, ctx);
    auto dy = anycl::Tensor::from_host(rt, {rows, out}, dz);
    model.backward(dy, ctx);
    return model.gradients().download();
  };
  const std::vector<float> g = backward();
  CHECK(backward() == g);
  std::vector<float> want(weights + out);
  for (size_t i = 0; i < in; ++i)
    for (size_t j = 0; j < out; ++j) {
      double sum = 0;
      for (size_t s = 0; s < rows; ++s) sum += double(x[s * in + i]) * dz[s * out + j];
      want[i * out + j] = float(sum);
    }
  for (size_t j = 0; j < out; ++j) {
    double sum = 0;
    for (size_t s = 0; s < rows; ++s) sum += dz[s * out + j];
    want[weights + j] = float(sum);
  }
  anycl::test::check_close(g, want, 1e-4, 1e-4, "turned dW, db vs host");
}
