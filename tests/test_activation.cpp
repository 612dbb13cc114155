// Fused bias + activation against tests/reference/activation.hpp (views at offsets, awkward
// sizes, untouched padding) and its backward pass against central finite differences.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <anycl/error.hpp>

#include <cmath>

#include "helpers.hpp"
#include "ops/activation.hpp"
#include "reference/activation.hpp"

using anycl::Activation;

namespace {

const Activation kActs[] = {Activation::linear,     Activation::relu, Activation::tanh, Activation::sigmoid,
                            Activation::leaky_relu, Activation::elu,  Activation::gelu};
constexpr float kSentinel = -777.f;  // padding around views: must survive every kernel

struct Shape {
  size_t rows, cols;
};
// Odd sizes around the backward kernel's 32-column × 8-row-lane work-group, one or many groups.
const Shape kShapes[] = {{1, 1},    {7, 31},   {31, 7}, {65, 65}, {1025, 3},
                         {3, 1025}, {128, 10}, {9, 40}, {5, 48}};

// A (rows, cols) view two rows into a sentinel-filled (rows+4, cols) tensor.
anycl::Tensor padded_view(anycl::Tensor& whole, size_t rows) { return whole.rows(2, rows); }

}  // namespace

TEST_CASE("bias_activation_forward matches the reference on views with padding untouched") {
  auto& rt = anycl::test::runtime();
  anycl::BiasActivation op(rt);
  unsigned seed = 100;
  for (Shape s : kShapes)
    for (Activation act : kActs) {
      const auto z = anycl::test::random_floats(s.rows * s.cols, -3.f, 3.f, seed++);
      const auto b = anycl::test::random_floats(s.cols, -1.f, 1.f, seed++);
      anycl::Tensor y_all(rt, {s.rows + 4, s.cols});
      y_all.fill(kSentinel);
      anycl::Tensor y = padded_view(y_all, s.rows);
      y.upload(z);
      // The bias is a slice of a larger flat buffer (as in the model's parameter vector).
      const size_t bias_off = 13;
      std::vector<float> flat(bias_off + s.cols + 5, kSentinel);
      std::copy(b.begin(), b.end(), flat.begin() + bias_off);
      auto flat_t = anycl::Tensor::from_host(rt, {flat.size()}, flat);
      // z (what a gelu layer keeps) gets y + bias, as a view between sentinel rows too.
      anycl::Tensor z_all(rt, {s.rows + 4, s.cols});
      z_all.fill(kSentinel);
      anycl::Tensor z_kept = padded_view(z_all, s.rows);
      op.forward(y, flat_t.rows(bias_off, s.cols), act, &z_kept);

      std::vector<float> ref_z(y_all.size(), kSentinel);
      std::copy(z.begin(), z.end(), ref_z.begin() + 2 * s.cols);
      anycl::reference::bias_activation_forward(ref_z.data() + 2 * s.cols, b.data(), s.rows, s.cols,
                                                Activation::linear);
      anycl::test::check_close(z_all.download(), ref_z, 0, 0, fmt::format("kept z ({}, {})", s.rows, s.cols));
      std::vector<float> ref_all(y_all.size(), kSentinel);
      std::copy(z.begin(), z.end(), ref_all.begin() + 2 * s.cols);
      anycl::reference::bias_activation_forward(ref_all.data() + 2 * s.cols, b.data(), s.rows, s.cols, act);
      anycl::test::check_close(y_all.download(), ref_all, 1e-6, 2e-6,
                               fmt::format("forward {} ({}, {})", anycl::to_string(act), s.rows, s.cols));
      anycl::test::check_close(flat_t.download(), flat, 0, 0, "bias buffer unchanged");
    }
}

TEST_CASE("dense_row_forward (one row: xW + bias, activated) matches the reference, padding untouched") {
  auto& rt = anycl::test::runtime();
  anycl::BiasActivation op(rt);
  unsigned seed = 300;
  // Widths below, at and around the 16 outputs per work-item; k of 1 and above a GEMM tile.
  for (Shape s : {Shape{1, 1}, Shape{3, 16}, Shape{7, 37}, Shape{130, 48}, Shape{784, 10}})
    for (Activation act : kActs) {
      const size_t k = s.rows, cols = s.cols;
      const auto x = anycl::test::random_floats(k, -1.f, 1.f, seed++);
      const auto w = anycl::test::random_floats(k * cols, -1.f, 1.f, seed++);
      const auto b = anycl::test::random_floats(cols, -1.f, 1.f, seed++);
      // Each operand a view at an offset into a larger buffer, as in a model's parameter vector.
      std::vector<float> flat(5 + k + k * cols + cols + 5, kSentinel);
      std::copy(x.begin(), x.end(), flat.begin() + 5);
      std::copy(w.begin(), w.end(), flat.begin() + 5 + k);
      std::copy(b.begin(), b.end(), flat.begin() + 5 + k + k * cols);
      auto flat_t = anycl::Tensor::from_host(rt, {flat.size()}, flat);
      anycl::Tensor y_all(rt, {3, cols});
      y_all.fill(kSentinel);
      anycl::Tensor y = y_all.rows(1, 1);
      op.forward_row(flat_t.rows(5, k).reshaped({1, k}), flat_t.rows(5 + k, k * cols).reshaped({k, cols}),
                     flat_t.rows(5 + k + k * cols, cols), y, act);

      std::vector<float> ref_all(3 * cols, kSentinel);
      for (size_t j = 0; j < cols; ++j) {
        double sum = 0;
        for (size_t i = 0; i < k; ++i) sum += double(x[i]) * double(w[i * cols + j]);
        ref_all[cols + j] = float(sum);
      }
      anycl::reference::bias_activation_forward(ref_all.data() + cols, b.data(), 1, cols, act);
      anycl::test::check_close(
          y_all.download(), ref_all, 1e-4, 1e-5,
          fmt::format("dense_row_forward {} (k {}, cols {})", anycl::to_string(act), k, cols));
      anycl::test::check_close(flat_t.download(), flat, 0, 0, "operands unchanged");
    }
  anycl::Tensor x(rt, {2, 3}), w(rt, {3, 4}), b(rt, {4}), y(rt, {2, 4});
  CHECK_THROWS_AS(op.forward_row(x, w, b, y, Activation::relu), anycl::ValidationError);  // two rows
}

TEST_CASE("bias_activation_backward matches the reference and writes only its dbias slice") {
  auto& rt = anycl::test::runtime();
  const bool rows_before = rt.row_kernels();
  unsigned seed = 200;
  // Both forms a CPU gets (runs of eight columns a work-item with PoCL's row kernels, work-groups of
  // 32 × 4 without) on this device; a GPU's is its own.
  for (const bool row_kernels : {true, false}) {
    rt.set_row_kernels(row_kernels);
    anycl::BiasActivation op(rt);
    rt.set_row_kernels(rows_before);
    for (Shape s : kShapes)
      for (Activation act : kActs) {
        // z: the activation's input; y = act(z), a real output (the kernel's act' reads y, or z for
        // gelu, which the layer keeps); the reference differentiates at z.
        const auto z_host = anycl::test::random_floats(s.rows * s.cols, -3.f, 3.f, seed++);
        auto y_host = z_host;
        anycl::reference::bias_activation_forward(y_host.data(), std::vector<float>(s.cols, 0.f).data(),
                                                  s.rows, s.cols, act);
        if (anycl::activation_keeps_input(act)) y_host = z_host;
        const auto dy_host = anycl::test::random_floats(s.rows * s.cols, -2.f, 2.f, seed++);

        anycl::Tensor y_all(rt, {s.rows + 4, s.cols}), dy_all(rt, {s.rows + 4, s.cols});
        y_all.fill(kSentinel);
        dy_all.fill(kSentinel);
        anycl::Tensor y = padded_view(y_all, s.rows), dy = padded_view(dy_all, s.rows);
        y.upload(y_host);
        dy.upload(dy_host);
        const size_t db_off = 9;
        anycl::Tensor db_flat(rt, {db_off + s.cols + 3});
        db_flat.fill(std::nanf(""));  // poisoned: every dbias element must be written
        anycl::Tensor db = db_flat.rows(db_off, s.cols);
        op.backward(y, dy, db, act);

        std::vector<float> dz_ref = dy_host, db_ref(s.cols);
        anycl::reference::bias_activation_backward(z_host.data(), dz_ref.data(), db_ref.data(), s.rows,
                                                   s.cols, act);
        const std::string what = fmt::format("backward {} ({}, {}), row kernels {}", anycl::to_string(act),
                                             s.rows, s.cols, row_kernels);
        anycl::test::check_close(dy.download(), dz_ref, 1e-6, 1e-5, what + " dz");
        anycl::test::check_close(db.download(), db_ref, 1e-4, 1e-4, what + " dbias");
        // Padding rows of dy and the rest of the dbias buffer stay as they were.
        const auto dy_pad = dy_all.rows(0, 2).download();
        anycl::test::check_close(dy_pad, std::vector<float>(dy_pad.size(), kSentinel), 0, 0,
                                 what + " dy padding");
        const auto db_all = db_flat.download();
        for (size_t i = 0; i < db_all.size(); ++i)
          if (i < db_off || i >= db_off + s.cols)
            CHECK_MESSAGE(std::isnan(db_all[i]), what, " wrote dbias index ", i);
      }
  }
}

// L(z, b) = Σ r·act(z + b) for fixed random r: dL/dz = r·act'(·) (the kernel's dz with dy = r)
// and dL/db = Σ_rows dL/dz. Central differences in double from the reference forward.
TEST_CASE("bias_activation_backward agrees with finite differences") {
  auto& rt = anycl::test::runtime();
  anycl::BiasActivation op(rt);
  const size_t rows = 9, cols = 6;
  unsigned seed = 300;
  for (Activation act : kActs) {
    auto z = anycl::test::random_floats(rows * cols, -2.f, 2.f, seed++);
    const auto b = anycl::test::random_floats(cols, -0.5f, 0.5f, seed++);
    const auto r = anycl::test::random_floats(rows * cols, -1.f, 1.f, seed++);
    for (size_t i = 0; i < z.size(); ++i)  // keep z + b away from relu's kink
      if (std::abs(z[i] + b[i % cols]) < 0.05f) z[i] += 0.2f;

    const std::vector<double> zd(z.begin(), z.end()), bd(b.begin(), b.end());
    auto loss = [&](const std::vector<double>& zz, const std::vector<double>& bb) {
      std::vector<double> y = zz;
      anycl::reference::bias_activation_forward(y.data(), bb.data(), rows, cols, act);
      double sum = 0;
      for (size_t i = 0; i < y.size(); ++i) sum += double(r[i]) * y[i];
      return sum;
    };
    const double h = 1e-5;
    std::vector<float> fd_dz(z.size()), fd_db(cols);
    for (size_t i = 0; i < z.size(); ++i) {
      auto zp = zd, zm = zd;
      zp[i] += h, zm[i] -= h;
      fd_dz[i] = float((loss(zp, bd) - loss(zm, bd)) / (2 * h));
    }
    for (size_t j = 0; j < cols; ++j) {
      auto bp = bd, bm = bd;
      bp[j] += h, bm[j] -= h;
      fd_db[j] = float((loss(zd, bp) - loss(zd, bm)) / (2 * h));
    }

    auto y = anycl::Tensor::from_host(rt, {rows, cols}, z);
    auto bias = anycl::Tensor::from_host(rt, {cols}, b);
    anycl::Tensor kept(rt, {rows, cols});
    op.forward(y, bias, act, &kept);  // what a layer keeps: y, and z for gelu
    auto dy = anycl::Tensor::from_host(rt, {rows, cols}, r);
    anycl::Tensor db(rt, {cols});
    db.fill(std::nanf(""));
    op.backward(anycl::activation_keeps_input(act) ? kept : y, dy, db, act);
    anycl::test::check_close(dy.download(), fd_dz, 1e-5, 1e-4,
                             fmt::format("{} dz vs FD", anycl::to_string(act)));
    anycl::test::check_close(db.download(), fd_db, 1e-5, 1e-4,
                             fmt::format("{} dbias vs FD", anycl::to_string(act)));
  }
}

TEST_CASE("activation names parse and misfits are rejected") {
  for (Activation act : kActs) CHECK(anycl::parse_activation(anycl::to_string(act)) == act);
  CHECK_THROWS_WITH_AS(anycl::parse_activation("swish"), doctest::Contains("relu, tanh, sigmoid, leaky_relu"),
                       anycl::ValidationError);
  auto& rt = anycl::test::runtime();
  anycl::BiasActivation op(rt);
  anycl::Tensor y(rt, {4, 3}), bias(rt, {4}), db(rt, {3});
  CHECK_THROWS_AS(op.forward(y, bias, Activation::relu), anycl::ValidationError);
  anycl::Tensor dy(rt, {3, 4});
  CHECK_THROWS_AS(op.backward(y, dy, db, Activation::relu), anycl::ValidationError);
}
