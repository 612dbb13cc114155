// Conv2D against tests/reference/conv.hpp (direct loops) for valid/same padding, strides, kernel
// sizes and every forward algorithm (im2col + GEMM, Convgemm, direct), with outputs poisoned by a NaN pass
// first; the backward pass (dW, db, dx) against central finite differences of the double-precision reference.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <anycl/blas/tuning.hpp>
#include <anycl/error.hpp>
#include <anycl/nn/conv2d.hpp>
#include <anycl/nn/model_from_flags.hpp>
#include <anycl/nn/sequential.hpp>

#include <clblast.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <numeric>
#include <string>
#include <utility>

#include "blas/clblast_params.hpp"
#include "blas/gemm_plan.hpp"
#include "helpers.hpp"
#include "indirect_gemm.hpp"
#include "ops/kernel_call.hpp"
#include "reference/conv.hpp"

using anycl::Activation;
using anycl::Padding;

namespace {

struct Case {
  size_t c, h, w, filters, kernel, stride;
  Padding padding;
  Activation act;
};
const Case kCases[] = {
    {1, 6, 6, 2, 3, 1, Padding::valid, Activation::relu},
    {2, 7, 5, 3, 3, 1, Padding::valid, Activation::tanh},
    {3, 6, 7, 4, 3, 2, Padding::same, Activation::linear},
    {2, 5, 5, 3, 2, 1, Padding::same, Activation::sigmoid},
    {2, 4, 4, 5, 1, 1, Padding::valid, Activation::linear},
    {1, 9, 8, 2, 5, 2, Padding::valid, Activation::relu},
    {2, 6, 6, 3, 3, 1, Padding::same, Activation::leaky_relu},
    {1, 7, 6, 2, 3, 2, Padding::valid, Activation::elu},
    {2, 5, 7, 3, 3, 2, Padding::same, Activation::gelu},
    {3, 5, 6, 4, 3, 1, Padding::same, Activation::gelu},  // Winograd's 4×4 blocks cut at both edges
    // Rows wide enough for the Winograd row kernels' four-tile chunks (18 columns of x, 16 of y), two
    // overlapping ones a row: edge columns gathered on both sides and a last block of one column (same
    // padding, width 21), and whole loads (valid), gelu's z among them; dx's rows (7 tiles) likewise
    {2, 5, 21, 3, 3, 1, Padding::same, Activation::relu},
    {2, 4, 26, 3, 3, 1, Padding::valid, Activation::gelu},
    // The direct forward pass's row of 10 in two overlapping chunks of eight columns summed in registers
    {1, 5, 12, 2, 3, 1, Padding::valid, Activation::relu},
    // Twelve channels: Winograd's weight gradient loads eight whole channels' windows as runs turned into
    // lanes (a window inside the row) and gathers the rest lane by lane (both edges: same padding), and
    // writes the last four channels of each kernel row without spilling into the next; nine filters: its dz
    // stage loads eight filters' whole blocks as runs, the ninth lane by lane
    {12, 6, 12, 9, 3, 1, Padding::same, Activation::relu},
    // Rows of three Winograd tiles (the BatchNorm CNN's conv 3: 12 × 12 to 10 × 10, its dx 12 × 12) and of
    // four blocks whose last is cut (15 columns of y): one chunk a row, its lanes past the row not stored
    {3, 12, 12, 4, 3, 1, Padding::valid, Activation::linear},
    {2, 6, 15, 3, 3, 1, Padding::same, Activation::elu},
};

struct Built {
  anycl::Conv2D layer;
  anycl::Tensor params, grads;
};

std::unique_ptr<Built> build(anycl::Runtime& rt, const Case& k, size_t batch, const std::vector<float>& p) {
  auto b = std::unique_ptr<Built>(
      new Built{anycl::Conv2D(k.filters, k.kernel, k.stride, k.padding, k.act), {}, {}});
  const anycl::Shape in{k.c, k.h, k.w};
  const size_t n = b->layer.parameter_count(in);
  REQUIRE(p.size() == n);
  b->params = anycl::Tensor::from_host(rt, {n}, p);
  b->grads = anycl::Tensor(rt, {n});
  b->grads.fill(std::nanf(""));
  b->layer.build(rt, in, batch, b->params, b->grads, 0);
  return b;
}

// One training step of the built layer on x (batch images) against the host reference: y, then dW, db
// and dx for a random dy (seed `dy_seed`).
void check_step_against_host(anycl::Runtime& rt, Built& b, const Case& k, const std::vector<float>& p,
                             const std::vector<float>& x, size_t batch, unsigned dy_seed) {
  const anycl::ConvGeometry g =
      anycl::Conv2D(k.filters, k.kernel, k.stride, k.padding, k.act).geometry({k.c, k.h, k.w});
  const anycl::StepContext ctx;
  anycl::Tensor y = b.layer.forward(anycl::Tensor::from_host(rt, {batch, k.c * k.h * k.w}, x), ctx);
  const auto y_ref = anycl::reference::conv2d_forward(g, k.filters, k.act, p.data(), x, batch);
  anycl::test::check_close(y.download(), y_ref, 1e-5, 1e-4, "conv2d forward");
  const auto dy = anycl::test::random_floats(y_ref.size(), -1.f, 1.f, dy_seed);
  auto dyt = anycl::Tensor::from_host(rt, y.shape(), dy);
  anycl::Tensor dx = b.layer.backward(dyt, ctx, true);
  std::vector<float> g_ref(p.size());
  const auto dx_ref =
      anycl::reference::conv2d_backward(g, k.filters, k.act, p.data(), x, y_ref, dy, batch, g_ref.data());
  anycl::test::check_close(b.grads.download(), g_ref, 1e-4, 1e-4, "conv2d dW, db");
  anycl::test::check_close(dx.download(), dx_ref, 1e-5, 1e-4, "conv2d dx");
}

}  // namespace

TEST_CASE("Conv2D forward and backward match the host reference (every forward algorithm)") {
  auto& rt = anycl::test::runtime();
  unsigned seed = 1500;
  // CLBlast's indirect kernel always (asked column-major: dW's operands padded to its tiles), then
  // its direct one always (row-major, unpadded).
  std::map<std::string, size_t> before;
  REQUIRE(anycl::detail::clblast_params::retrieve(rt.info().id, "GemmRoutine", before) ==
          clblast::StatusCode::kSuccess);
  // Under Oclgrind (tools/run-oclgrind.sh), which simulates every work-item, the GEMM kernels run with
  // 8x8 tiles instead of CLBlast's 64x64 defaults: these small products then pad to far less
  // work (the indirect kernel and its copies were 362 of the test's 562 s there). The buffers anycl hands
  // CLBlast, and so what the simulator checks, are the same.
  anycl::GemmTuning restore;
  restore.kernels["GemmRoutine"] = before;
  const bool simulator = rt.info().platform_name.rfind("Oclgrind", 0) == 0;
  if (simulator) {
    anycl::GemmTuning small;
    small.kernels["Xgemm"] = {{"GEMMK", 0}, {"KREG", 1},  {"KWG", 8}, {"KWI", 2},
                              {"MDIMA", 8}, {"MDIMC", 8}, {"MWG", 8}, {"NDIMB", 8},
                              {"NDIMC", 8}, {"NWG", 8},   {"SA", 0},  {"SB", 0},
                              {"STRM", 0},  {"STRN", 0},  {"VWM", 1}, {"VWN", 1}};
    small.kernels["XgemmDirect"] = {{"KWID", 2}, {"MDIMAD", 8}, {"MDIMCD", 8}, {"NDIMBD", 8}, {"NDIMCD", 8},
                                    {"PADA", 1}, {"PADB", 1},   {"VWMD", 1},   {"VWND", 1},   {"WGD", 8}};
    for (const auto& [name, params] : small.kernels)
      REQUIRE(anycl::detail::clblast_params::retrieve(rt.info().id, name, restore.kernels[name]) ==
              clblast::StatusCode::kSuccess);
    anycl::apply_tuning(rt, small);
  }
  // On the indirect kernel also with dW's slices as one GEMM each (the GEMM planner's batched_dw off), and
  // with im2col's and col2im's other forms than the driver's (Runtime::row_kernels), so that both are
  // checked.
  const bool driver_rows = rt.row_kernels();
  // Slices of any length, so that these small planes split dW (the planner's 512 pixels otherwise).
  struct ShortSlices {
    anycl::Runtime& rt;
    size_t before = anycl::detail::gemm_state(rt).dw_min_slice_columns;
    ~ShortSlices() { anycl::detail::gemm_state(rt).dw_min_slice_columns = before; }
  } short_slices{rt};
  anycl::detail::gemm_state(rt).dw_min_slice_columns = 1;
  struct Setting {
    size_t from;
    bool batched_dw, row_kernels;
  };
  const Setting settings[] = {
      {1, true, driver_rows}, {1, false, !driver_rows}, {size_t{1} << 20, true, driver_rows}};
  // Everywhere else every case runs under every setting (under two seconds on PoCL). Under Oclgrind, where
  // crossing them took 238 of the stage's 525 s, each (case, algorithm, batch) runs under one setting: each
  // (case, algorithm) under the second setting (the only one with the row forms of im2col, col2im and the
  // output kernels there, as Oclgrind is no row-kernel driver) with one batch, and under the first or the
  // third, in turn, with the other. Every case still meets every setting, and every setting every
  // algorithm with both batches.
  const auto runs_under = [&](size_t case_index, size_t algo_index, size_t batch_index) -> size_t {
    const size_t second_batch = case_index % 2;  // the batch that runs under the second setting
    if (batch_index == second_batch) return 1;
    return (case_index / 2 + algo_index) % 2 == 0 ? 0 : 2;
  };
  for (size_t setting_index = 0; setting_index < std::size(settings); ++setting_index) {
    const Setting& setting = settings[setting_index];
    const size_t from = setting.from;  // plain variables: CAPTURE's lambda takes them by reference
    const bool batched_dw = setting.batched_dw, row_kernels = setting.row_kernels;
    anycl::GemmTuning routine;
    routine.kernels["GemmRoutine"] = {{"XGEMM_MIN_INDIRECT_SIZE", from}};
    anycl::apply_tuning(rt, routine);
    anycl::detail::gemm_state(rt).batched_dw = batched_dw;
    rt.set_row_kernels(row_kernels);
    CAPTURE(from);
    CAPTURE(batched_dw);
    CAPTURE(row_kernels);
    const anycl::ConvForward algorithms[] = {anycl::ConvForward::im2col_gemm, anycl::ConvForward::convgemm,
                                             anycl::ConvForward::direct, anycl::ConvForward::winograd};
    const size_t batches[] = {3, 1};  // dW split into 3 slices, and in one GEMM
    for (size_t case_index = 0; case_index < std::size(kCases); ++case_index)
      for (size_t algo_index = 0; algo_index < std::size(algorithms); ++algo_index)
        for (size_t batch_index = 0; batch_index < std::size(batches); ++batch_index) {
          if (simulator && runs_under(case_index, algo_index, batch_index) != setting_index) continue;
          const Case& k = kCases[case_index];
          const anycl::ConvForward algo = algorithms[algo_index];
          const size_t batch = batches[batch_index];
          const int padding = int(k.padding), algorithm = int(algo);
          CAPTURE(k.c);
          CAPTURE(k.h);
          CAPTURE(k.kernel);
          CAPTURE(k.stride);
          CAPTURE(padding);
          CAPTURE(algorithm);
          CAPTURE(batch);
          const anycl::Conv2D shape_of(k.filters, k.kernel, k.stride, k.padding, k.act);
          const anycl::ConvGeometry g = shape_of.geometry({k.c, k.h, k.w});
          const auto p = anycl::test::random_floats(shape_of.parameter_count(anycl::Shape{k.c, k.h, k.w}),
                                                    -0.5f, 0.5f, seed++);
          const auto x = anycl::test::random_floats(batch * k.c * k.h * k.w, -1.f, 1.f, seed++);
          // A batch below the built maximum (the column layout uses the batch). 17 is prime: a full batch's
          // dW is one GEMM, while these batches split theirs.
          auto b = build(rt, k, 17, p);
          b->layer.set_forward(algo);
          const anycl::StepContext ctx;
          // Poison: a NaN pass first, so an element the real pass skips stays NaN.
          b->layer.forward(anycl::Tensor::from_host(rt, {batch, k.c * k.h * k.w},
                                                    std::vector<float>(x.size(), std::nanf(""))),
                           ctx);
          const auto xt = anycl::Tensor::from_host(rt, {batch, k.c * k.h * k.w}, x);
          anycl::Tensor y = b->layer.forward(xt, ctx);
          const auto y_ref = anycl::reference::conv2d_forward(g, k.filters, k.act, p.data(), x, batch);
          CHECK(y.shape() == std::vector<size_t>{batch, k.filters, g.out_h, g.out_w});
          // Winograd's F(4×4, 3×3) rounds more than a direct sum: its transforms scale by up to 8 and 1/24,
          // so its error follows the terms (up to 108 of magnitude 0.5 here), not the result: twelve
          // channels' sum of 0.0034 came out 1.9e-5 off on Intel's runtime, in the old kernels and the new
          // alike. A wrong lane or tile is off by the values themselves (0.1 and more).
          const double atol = algo == anycl::ConvForward::winograd ? 1e-4 : 1e-5;
          anycl::test::check_close(y.download(), y_ref, atol, 1e-4, "conv2d forward");

          const auto dy = anycl::test::random_floats(y_ref.size(), -1.f, 1.f, seed++);
          auto dyt = anycl::Tensor::from_host(rt, y.shape(), dy);
          anycl::Tensor dx = b->layer.backward(dyt, ctx, true);
          std::vector<float> g_ref(p.size());
          const auto dx_ref = anycl::reference::conv2d_backward(g, k.filters, k.act, p.data(), x, y_ref, dy,
                                                                batch, g_ref.data());
          anycl::test::check_close(b->grads.download(), g_ref, 1e-4, 1e-4, "conv2d dW, db");
          anycl::test::check_close(dx.download(), dx_ref, atol, 1e-4, "conv2d dx");
          CHECK(b->layer.dw_slices(batch) == batch);
        }
  }
  anycl::apply_tuning(rt, restore);
  anycl::detail::gemm_state(rt).batched_dw = true;
  rt.set_row_kernels(driver_rows);
}

TEST_CASE(
    "Conv2D splits a weight gradient of few output tiles over slices of whole samples, one of many not") {
  auto& rt = anycl::test::runtime();
  const Case small{1, 28, 28, 32, 3, 1, Padding::valid, Activation::relu};    // the reference CNN's first
  const Case second{32, 26, 26, 64, 3, 1, Padding::valid, Activation::relu};  // and second layers
  const Case wide{64, 12, 12, 256, 3, 1, Padding::valid, Activation::relu};   // 4 × 9 tiles of 64×64
  const anycl::Conv2D shape_of(small.filters, small.kernel);
  const size_t most_before =
      anycl::detail::gemm_state(rt).dw_slices;  // PoCL's CPU entries say 128 (anyclConv DW_SLICES)
  anycl::detail::set_most_dw_slices(rt, anycl::detail::GemmState::kDefaultDwSlices);
  const auto b = build(rt, small, 128, std::vector<float>(shape_of.parameter_count({1, 28, 28}), 0.f));
  CHECK(b->layer.dw_slices(128) == 16);
  CHECK(b->layer.dw_slices(96) == 16);
  CHECK(b->layer.dw_slices(40) == 10);  // the largest divisor up to 16
  CHECK(b->layer.dw_slices(17) == 1);   // a prime batch: one GEMM
  CHECK(b->layer.dw_slices(1) == 1);
  // The runtime's bound, read at each call (a tuning applied after build() may change it).
  anycl::detail::set_most_dw_slices(rt, 128);
  CHECK(b->layer.dw_slices(128) == 128);  // one sample a slice
  CHECK(b->layer.dw_slices(96) == 96);
  CHECK(b->layer.dw_slices(17) == 17);
  CHECK(b->layer.dw_slices(256) == 128);
  anycl::detail::set_most_dw_slices(rt, 0);  // no bound is no split's bound: the default
  CHECK(anycl::detail::gemm_state(rt).dw_slices == anycl::detail::GemmState::kDefaultDwSlices);
  anycl::detail::set_most_dw_slices(rt, most_before);
  const anycl::Conv2D second_shape(second.filters, second.kernel);
  const auto s2 = build(rt, second, 4, std::vector<float>(second_shape.parameter_count({32, 26, 26}), 0.f));
  CHECK(s2->layer.dw_slices(4) == 4);  // 64×288: five tiles
  const anycl::Conv2D wide_shape(wide.filters, wide.kernel);
  const auto w = build(rt, wide, 4, std::vector<float>(wide_shape.parameter_count({64, 12, 12}), 0.f));
  CHECK(w->layer.dw_slices(4) == 1);
  // A small plane (the BatchNorm CNN's conv 3: 10×10 outputs, 64×576 in 9 tiles): slices of whole
  // samples at least kDwMinSliceColumns (512) pixels long, 6 samples and more, so 8 of 128.
  const Case late{64, 12, 12, 64, 3, 1, Padding::valid, Activation::relu};
  const anycl::Conv2D late_shape(late.filters, late.kernel);
  anycl::detail::set_most_dw_slices(rt, 128);
  const auto l = build(rt, late, 128, std::vector<float>(late_shape.parameter_count({64, 12, 12}), 0.f));
  CHECK(l->layer.dw_slices(128) == 16);
  CHECK(l->layer.dw_slices(96) == 16);  // 96 / 6: the largest divisor up to 16
  CHECK(l->layer.dw_slices(10) == 1);   // 1000 pixels: one slice
  CHECK(l->layer.dw_slices(12) == 2);
  CHECK(b->layer.dw_slices(128) == 128);  // 26×26 planes: one sample a slice, as before
  anycl::detail::set_most_dw_slices(rt, most_before);
}

// L = Σ r·y(x, W, b): the device's gradients against central differences of the double reference.
TEST_CASE("Conv2D backward agrees with finite differences") {
  for (const Activation act : {Activation::tanh, Activation::leaky_relu, Activation::elu, Activation::gelu}) {
    const std::string name = anycl::to_string(act);
    CAPTURE(name);
    auto& rt = anycl::test::runtime();
    const Case k{2, 5, 6, 3, 3, 2, Padding::same, act};
    const size_t batch = 2;
    const anycl::Conv2D shape_of(k.filters, k.kernel, k.stride, k.padding, k.act);
    const anycl::ConvGeometry g = shape_of.geometry({k.c, k.h, k.w});
    const auto p =
        anycl::test::random_floats(shape_of.parameter_count(anycl::Shape{k.c, k.h, k.w}), -0.5f, 0.5f, 7);
    const auto x = anycl::test::random_floats(batch * k.c * k.h * k.w, -1.f, 1.f, 8);
    const auto r = anycl::test::random_floats(batch * k.filters * g.plane(), -1.f, 1.f, 9);
    const std::vector<double> pd(p.begin(), p.end()), xd(x.begin(), x.end());
    auto loss = [&](const std::vector<double>& pp, const std::vector<double>& xx) {
      const auto y = anycl::reference::conv2d_forward(g, k.filters, k.act, pp.data(), xx, batch);
      double sum = 0;
      for (size_t i = 0; i < y.size(); ++i) sum += double(r[i]) * y[i];
      return sum;
    };
    const double h = 1e-5;
    std::vector<float> fd_p(p.size()), fd_x(x.size());
    for (size_t i = 0; i < p.size(); ++i) {
      auto a = pd, b = pd;
      a[i] += h, b[i] -= h;
      fd_p[i] = float((loss(a, xd) - loss(b, xd)) / (2 * h));
    }
    for (size_t i = 0; i < x.size(); ++i) {
      auto a = xd, b = xd;
      a[i] += h, b[i] -= h;
      fd_x[i] = float((loss(pd, a) - loss(pd, b)) / (2 * h));
    }
    auto built = build(rt, k, batch, p);
    const anycl::StepContext ctx;
    anycl::Tensor y = built->layer.forward(anycl::Tensor::from_host(rt, {batch, k.c * k.h * k.w}, x), ctx);
    auto dy = anycl::Tensor::from_host(rt, y.shape(), r);
    anycl::Tensor dx = built->layer.backward(dy, ctx, true);
    anycl::test::check_close(built->grads.download(), fd_p, 1e-4, 1e-3, "dW, db vs finite differences");
    anycl::test::check_close(dx.download(), fd_x, 1e-4, 1e-3, "dx vs finite differences");
  }
}

// Winograd's weight gradient (ConvWinogradOps::backward_dw) in slices of 1×4 blocks: 12 images of 8 × 24
// outputs are 576 blocks, two slices of 320 (the last one's 64 rows past the last block zeros), summed in
// order; 8 channels (float8 loads), 5 filters (lanes past F zero).
TEST_CASE("Conv2D's Winograd weight gradient over slices of blocks matches the host") {
  auto& rt = anycl::test::runtime();
  const Case k{8, 10, 26, 5, 3, 1, Padding::valid, Activation::relu};
  const size_t batch = 12;
  const anycl::Conv2D shape_of(k.filters, k.kernel, k.stride, k.padding, k.act);
  const anycl::Shape in{k.c, k.h, k.w};
  const auto p = anycl::test::random_floats(shape_of.parameter_count(in), -0.5f, 0.5f, 2100);
  const auto x = anycl::test::random_floats(batch * k.c * k.h * k.w, -1.f, 1.f, 2101);
  auto b = build(rt, k, batch, p);
  b->layer.set_forward(anycl::ConvForward::winograd);
  const auto shapes = b->layer.gemm_shapes(in, batch, true, &rt);
  const auto dw = std::find_if(shapes.begin(), shapes.end(), [](const auto& s) { return s.label == "dW"; });
  REQUIRE(dw != shapes.end());
  CHECK(dw->count == 6 * 2);  // 6 planes, 2 slices
  CHECK(dw->k == 320);
  check_step_against_host(rt, *b, k, p, x, batch, 2102);
}

TEST_CASE("Conv2D refuses inputs it cannot slide over and flat inputs, with the reason") {
  const anycl::Conv2D conv(8, 3);
  CHECK(conv.output_shape({1, 28, 28}) == anycl::Shape{8, 26, 26});
  CHECK(conv.parameter_count(anycl::Shape{1, 28, 28}) == 8 * 9 + 8);
  CHECK(anycl::Conv2D(4, 3, 2, Padding::same).output_shape({2, 7, 8}) == anycl::Shape{4, 4, 4});
  CHECK_THROWS_WITH_AS(conv.output_shape({784}), doctest::Contains("needs image inputs"),
                       anycl::ValidationError);
  CHECK_THROWS_WITH_AS(conv.output_shape({1, 2, 2}), doctest::Contains("smaller than the kernel"),
                       anycl::ValidationError);
  CHECK_THROWS_AS(anycl::Conv2D(0, 3), anycl::ValidationError);
  CHECK_THROWS_AS(anycl::Conv2D(4, 0), anycl::ValidationError);
}

TEST_CASE("Conv2D runs a patch of at most 32 as direct kernels on a CPU, a longer one as GEMMs") {
  auto& rt = anycl::test::runtime();
  const bool cpu = rt.info().type == anycl::DeviceType::cpu;
  anycl::Conv2D conv(32, 3);                            // ConvForward::automatic
  CHECK(conv.uses_direct(&rt, {1, 28, 28}) == cpu);     // patch 9: the reference CNN's conv 1
  CHECK(conv.uses_direct(&rt, {3, 32, 32}) == cpu);     // patch 27
  CHECK_FALSE(conv.uses_direct(&rt, {4, 32, 32}));      // patch 36
  CHECK_FALSE(conv.uses_direct(&rt, {32, 26, 26}));     // patch 288: conv 2
  CHECK_FALSE(conv.uses_direct(nullptr, {1, 28, 28}));  // no device known: GEMMs
  conv.set_forward(anycl::ConvForward::direct);         // on any device, for a short patch
  CHECK(conv.uses_direct(&rt, {1, 28, 28}));
  CHECK_FALSE(conv.uses_direct(&rt, {32, 26, 26}));
  conv.set_forward(anycl::ConvForward::im2col_gemm);
  CHECK_FALSE(conv.uses_direct(&rt, {1, 28, 28}));
}

TEST_CASE("Conv2D runs a 3x3 stride-1 layer with a longer patch as Winograd's on a CPU") {
  auto& rt = anycl::test::runtime();
  const bool cpu = rt.info().type == anycl::DeviceType::cpu;
  anycl::Conv2D conv(64, 3);                                              // ConvForward::automatic
  CHECK(conv.uses_winograd(&rt, {32, 26, 26}) == cpu);                    // the reference CNN's conv 2
  if (cpu) CHECK_FALSE(conv.uses_winograd(&rt, {1, 28, 28}));             // conv 1: direct kernels on a CPU
  CHECK_FALSE(conv.uses_winograd(nullptr, {32, 26, 26}));                 // no device known: GEMMs
  CHECK_FALSE(anycl::Conv2D(64, 3, 2).uses_winograd(&rt, {32, 26, 26}));  // stride 2
  CHECK_FALSE(anycl::Conv2D(64, 5).uses_winograd(&rt, {32, 26, 26}));     // 5×5
  conv.set_forward(anycl::ConvForward::winograd);                         // on any device
  CHECK(conv.uses_winograd(&rt, {32, 26, 26}));
  CHECK(conv.uses_winograd(&rt, {1, 28, 28}));
  CHECK_FALSE(conv.uses_direct(&rt, {1, 28, 28}));
  conv.set_forward(anycl::ConvForward::im2col_gemm);
  CHECK_FALSE(conv.uses_winograd(&rt, {32, 26, 26}));
}

// A tuning's `anyclConvDwXgemm` line (the AVX2 entry's, for the reference CNN's conv 2): dW's GEMM on
// an Xgemm set of its own (ConvDwGemmScope), laid out for that set's tiles, and the model's set back
// for everything after it. A patch of 144 on the model's 32-wide tiles is padded to 160 (db's column
// in it); on the dW set's 16-wide ones it is whole. dW, db and dx against the host either way.
TEST_CASE("Conv2D's weight gradient on its own Xgemm set (anyclConvDwXgemm) agrees with the host") {
  auto& rt = anycl::test::runtime();
  const anycl::test::IndirectGemmScope indirect(rt);  // the model's set: 32 × 32 tiles; the device's after
  struct NoDwSet {
    anycl::Runtime& rt;
    ~NoDwSet() { anycl::detail::gemm_state(rt).dw_xgemm.clear(); }
  } no_dw_set{rt};
  const std::map<std::string, size_t> model_set = anycl::test::current_xgemm(rt);
  std::map<std::string, size_t> dw_set = model_set;
  dw_set["MWG"] = 16, dw_set["VWM"] = 2;                              // MDIMC·VWM = MDIMA·VWM = 16
  const Case k{16, 6, 6, 8, 3, 1, Padding::valid, Activation::relu};  // patch 144, 4 × 4 outputs
  const anycl::Conv2D shape_of(k.filters, k.kernel, k.stride, k.padding, k.act);
  const anycl::Shape in{k.c, k.h, k.w};
  const size_t batch = 4;
  const auto p = anycl::test::random_floats(shape_of.parameter_count(in), -0.5f, 0.5f, 1900);
  const auto x = anycl::test::random_floats(batch * k.c * k.h * k.w, -1.f, 1.f, 1901);
  for (const bool own : {false, true}) {
    CAPTURE(own);
    anycl::GemmTuning line;
    line.kernels[anycl::detail::kConvDwXgemm] = own ? dw_set : std::map<std::string, size_t>{};
    anycl::apply_tuning(rt, line);
    {  // the scope: the dW set while it lives (a scope inside it changes nothing), the model's after
      const anycl::detail::ConvDwGemmScope outer(rt);
      CHECK(anycl::test::current_xgemm(rt) == (own ? dw_set : model_set));
      { const anycl::detail::ConvDwGemmScope inner(rt); }
      CHECK(anycl::test::current_xgemm(rt) == (own ? dw_set : model_set));
    }
    auto b = build(rt, k, batch, p);
    b->layer.set_forward(anycl::ConvForward::im2col_gemm);
    const auto shapes = b->layer.gemm_shapes(in, batch, true, &rt);
    const auto dw = std::find_if(shapes.begin(), shapes.end(), [](const auto& s) { return s.label == "dW"; });
    REQUIRE(dw != shapes.end());
    CHECK(dw->n == (own ? 144 : 160));
    check_step_against_host(rt, *b, k, p, x, batch, 1902);
    CHECK(anycl::test::current_xgemm(rt) == model_set);  // dx and every later GEMM on the model's set
  }
}

// A tuning's `anyclConvWinogradXgemm` line (the PoCL CPU entries', for the reference CNN's conv 2 input
// gradient): Winograd's per-plane products on an Xgemm set of their own (ConvWinogradGemmScope) where its
// tiles pad them less, laid out for that set's tiles, and the model's set back after them. On the model's
// 32 × 32 tiles the forward product's 8 filters and dx's 16 channels are padded to 32; on the Winograd
// set's 32 × 16 ones to 16 (a set of 16-wide tiles only where C is fewer elements on it: the forward's
// 8 filters run there, so both products do). y, dW, db and dx against the host either way.
TEST_CASE("Conv2D's Winograd products on their own Xgemm set (anyclConvWinogradXgemm) agree with the host") {
  auto& rt = anycl::test::runtime();
  const anycl::test::IndirectGemmScope indirect(rt);  // the model's set: 32 × 32 tiles; the device's after
  struct NoWinogradSet {
    anycl::Runtime& rt;
    ~NoWinogradSet() { anycl::detail::gemm_state(rt).winograd_xgemm.clear(); }
  } no_set{rt};
  const std::map<std::string, size_t> model_set = anycl::test::current_xgemm(rt);
  std::map<std::string, size_t> winograd_set = model_set;
  winograd_set["NWG"] = 16, winograd_set["VWN"] = 2;                  // NDIMC·VWN = NDIMB·VWN = 16
  const Case k{16, 10, 9, 8, 3, 1, Padding::same, Activation::tanh};  // 3 × 3 tiles an image
  const anycl::Conv2D shape_of(k.filters, k.kernel, k.stride, k.padding, k.act);
  const anycl::Shape in{k.c, k.h, k.w};
  const size_t batch = 5;
  const auto p = anycl::test::random_floats(shape_of.parameter_count(in), -0.5f, 0.5f, 1950);
  const auto x = anycl::test::random_floats(batch * k.c * k.h * k.w, -1.f, 1.f, 1951);
  for (const bool own : {false, true}) {
    CAPTURE(own);
    anycl::GemmTuning line;
    line.kernels[anycl::detail::kConvWinogradXgemm] = own ? winograd_set : std::map<std::string, size_t>{};
    anycl::apply_tuning(rt, line);
    {  // the scope: the set for a product it pads less (a scope inside it changes nothing), none else
      const anycl::detail::ConvWinogradGemmScope outer(rt, 16, 45, 8);
      CHECK(anycl::test::current_xgemm(rt) == (own ? winograd_set : model_set));
      { const anycl::detail::ConvWinogradGemmScope inner(rt, 16, 45, 8); }
      CHECK(anycl::test::current_xgemm(rt) == (own ? winograd_set : model_set));
      CHECK(anycl::detail::winograd_padding(rt, 16, 45, 8).m == (own ? 16 : 32));
    }
    {  // 32 rows are whole tiles of either set: the model's stays
      const anycl::detail::ConvWinogradGemmScope whole(rt, 32, 45, 8);
      CHECK(anycl::test::current_xgemm(rt) == model_set);
    }
    auto b = build(rt, k, batch, p);
    b->layer.set_forward(anycl::ConvForward::winograd);
    REQUIRE(b->layer.uses_winograd(&rt, in));
    const auto shapes = b->layer.gemm_shapes(in, batch, true, &rt);
    const auto fwd =
        std::find_if(shapes.begin(), shapes.end(), [](const auto& s) { return s.label == "fwd"; });
    const auto dx = std::find_if(shapes.begin(), shapes.end(), [](const auto& s) { return s.label == "dX"; });
    REQUIRE(fwd != shapes.end());
    REQUIRE(dx != shapes.end());
    CHECK(fwd->m == (own ? 16 : 32));  // 8 filters
    CHECK(dx->m == (own ? 16 : 32));   // 16 channels
    check_step_against_host(rt, *b, k, p, x, batch, 1952);
    CHECK(anycl::test::current_xgemm(rt) == model_set);  // every later GEMM on the model's set
  }
}

TEST_CASE("the reference CNN's GEMM shapes on a runtime are those its training runs there") {
  // anycl tune, first-use tuning and bench gemm time these: on a CPU, conv 1 (patch 9, the first
  // layer: no dx) runs direct kernels and no GEMM at all; conv 2's dW in the slices and padding of
  // the runtime's GEMM planner, as the built layer runs it, not the planner's default of 16 slices.
  auto& rt = anycl::test::runtime();
  const bool cpu = rt.info().type == anycl::DeviceType::cpu;
  struct Bound {  // the runtime's dW bound, restored however the test ends
    anycl::Runtime& rt;
    size_t before = anycl::detail::gemm_state(rt).dw_slices;
    ~Bound() { anycl::detail::set_most_dw_slices(rt, before); }
  } bound{rt};
  anycl::detail::set_most_dw_slices(rt, 8);
  const size_t batch = 32, columns = batch * 24 * 24;  // conv 2: 64 filters, patch 288, 24×24 out
  anycl::Sequential model(anycl::reference_cnn());
  const auto shapes = anycl::model_gemm_shapes(model, batch, &rt);
  const auto anywhere = anycl::model_gemm_shapes(model, batch, nullptr);
  model.build(rt, batch);
  const auto& conv1 = dynamic_cast<const anycl::Conv2D&>(*model.layers().at(0));
  const auto& conv2 = dynamic_cast<const anycl::Conv2D&>(*model.layers().at(1));
  CHECK(conv1.gemm_shapes({1, 28, 28}, batch, false, &rt).empty() == cpu);
  CHECK(conv1.gemm_shapes({1, 28, 28}, batch, false, nullptr).size() == 2);  // no device: fwd and dW
  CHECK(shapes.size() == anywhere.size() - (cpu ? 2 : 0));
  for (const anycl::GemmShape& s : shapes) {  // conv 1's: 32 filters over a patch of 9
    CAPTURE(s.label);
    CHECK((cpu && s.m == 32 && (s.k == 9 || s.n == 9)) == false);
  }
  const anycl::GemmShape* dw = nullptr;  // conv 2's: the only dW as wide as its patch, or Winograd's 3C
  for (const anycl::GemmShape& s : shapes)
    if (s.label.rfind("dW", 0) == 0 && (cpu ? s.count % 6 == 0 && std::max(s.m, s.n) >= 96 : s.n >= 288))
      dw = dw ? nullptr : &s;
  REQUIRE(dw);
  CHECK(dw->trans_a);
  if (cpu) {  // Winograd's: 6 planes of 64 filters × 3·32 columns over slices of 1×4 blocks, a multiple of 64
    const size_t blocks = batch * 24 * 6, slices = dw->count / 6;
    CHECK(dw->count % 6 == 0);
    CHECK(slices >= 1);
    CHECK(dw->k % 64 == 0);
    CHECK(dw->k * slices >= blocks);
    CHECK(dw->k * (slices - 1) < blocks);             // no slice of padding only
    const auto padded_as = [&](size_t m, size_t n) {  // F × 3C or 3C × F, padded to whole tiles and lanes
      const anycl::GemmPadding pad = anycl::gemm_padding(rt, m, n, dw->k);
      return dw->m == anycl::detail::round_up(m, std::lcm(pad.m, size_t(8))) &&
             dw->n == anycl::detail::round_up(n, std::lcm(pad.n, size_t(8)));
    };
    CHECK((padded_as(64, 96) || padded_as(96, 64)));
  } else {
    const size_t slices = conv2.dw_slices(batch), part = columns / slices;
    CHECK(slices == 8);
    CHECK(dw->count == slices);
    CHECK(dw->k == part);
    const anycl::GemmPadding pad = anycl::gemm_padding(rt, 64, 288, part);
    CHECK(dw->m == anycl::detail::round_up(64, pad.m));
    CHECK(dw->n == anycl::detail::round_up(288, pad.n));
  }
  const anycl::GemmShape* dx = nullptr;  // conv 2's dX: dcol = Wᵀ·dz, its rows padded as trained
  for (const anycl::GemmShape& s : shapes)
    if (s.label.rfind("dX", 0) == 0 && s.trans_a) dx = dx ? nullptr : &s;
  REQUIRE(dx);
  if (cpu) {  // Winograd's: 36 products of 32 channels × 64 filters by 64 × tiles
    const size_t tiles = batch * 7 * 7;  // 4×4 blocks of the 26×26 input
    const anycl::GemmPadding xp = anycl::gemm_padding(rt, 32, tiles, 64);
    CHECK(dx->count == 36);
    CHECK(dx->m == anycl::detail::round_up(32, xp.m));
    CHECK(dx->n == anycl::detail::round_up(tiles, xp.n));
  } else {
    CHECK(dx->m == anycl::detail::round_up(288, anycl::gemm_padding(rt, 288, columns, 64).m));
    CHECK(dx->n == columns);
  }
  CHECK(dx->k == 64);
  const anycl::GemmShape* fwd = nullptr;  // conv 2's forward: Winograd's 36 products on a CPU
  for (const anycl::GemmShape& s : shapes)
    if (s.label.rfind("fwd", 0) == 0 && (s.m == 64 || s.k == 288 || s.count == 36)) fwd = fwd ? nullptr : &s;
  REQUIRE(fwd);
  if (cpu) {
    const size_t tiles = batch * 6 * 6;  // 4×4 blocks of the 24×24 output
    const anycl::GemmPadding wp = anycl::gemm_padding(rt, 64, tiles, 32);
    CHECK(fwd->count == 36);
    CHECK(fwd->trans_a);
    CHECK(fwd->m == anycl::detail::round_up(64, wp.m));
    CHECK(fwd->n == anycl::detail::round_up(tiles, wp.n));
    CHECK(fwd->k == 32);
  } else {
    CHECK(fwd->count == 1);
    CHECK(fwd->k == 288);
  }
}
