// `anycl bench gemm`: CLBlast's SGEMM at the reference model's shapes and square sizes beside host
// CBLAS (OpenBLAS), with the Dense products also timed as training runs them on this device.
#include "bench_gemm.hpp"

#include <fmt/format.h>

#include <exception>

#include "anycl/blas/blas.hpp"
#include "anycl/blas/tuning.hpp"
#include "anycl/nn/model_from_flags.hpp"
#include "anycl/nn/sequential.hpp"
#include "anycl/tensor.hpp"
#include "bench_host_blas.hpp"
#include "bench_peak.hpp"

namespace anycl::cli {

Table bench_gemm(Runtime& rt, const BenchSettings& s) {
  Table t;
  t.name = "gemm";
  t.title = "SGEMM GFLOP/s: CLBlast on the device vs host CBLAS, same shapes, same run";
  t.columns = {"shape", "op", "m", "n", "k", "device GFLOP/s", "host GFLOP/s", "device/host", "% of peak"};
  // The % of peak column's peak: --peak-gflops, else measured on the device first (bench_peak.hpp).
  double peak = s.peak_gflops;
  std::string peak_note;
  if (peak > 0) {
    peak_note = fmt::format("peak {:.0f} GFLOP/s as given by --peak-gflops", peak);
  } else {
    try {
      const MeasuredPeak measured = measure_peak(rt, s.repeats);
      peak = measured.gflops;
      peak_note = fmt::format(
          "peak {:.0f} GFLOP/s measured on the device: {} independent multiply-add chains of float{} a "
          "work-item, {} work-items (GFLOP/s by width: {}); --peak-gflops gives another",
          peak, kPeakChains, measured.vector_width, measured.work_items, measured.widths);
    } catch (const std::exception& e) {  // a wrong result (Error) or a driver that refused the kernel
      peak_note = std::string("% of peak left out: ") + e.what();
    }
  }
  ModelFlags flags;
  flags.layers = s.gemm_model == "cnn" ? kReferenceCnnLayers : "512,512";
  Sequential model(model_from_flags(flags, Shape{1, 28, 28}, 10));
  model.build(rt, 128);  // which prepares its GEMMs on the runtime (the database's sets), as training does
  // The GEMMs a step runs on this device, as it runs them (after build: the sets the model trains with)
  std::vector<GemmShape> shapes = model_gemm_shapes(model, 128, &rt);
  const size_t model_shapes = shapes.size();
  for (size_t n : s.sizes) shapes.push_back({fmt::format("{}³", n), false, false, n, n, n});
  double model_dev = 0, model_host = 0;
  for (const auto& sh : shapes) {
    const size_t a_n = sh.m * sh.k, b_n = sh.k * sh.n, c_n = sh.m * sh.n;
    const auto ha = random_floats(a_n, 1), hb = random_floats(b_n, 2);
    std::vector<float> hc(c_n);
    Tensor a = Tensor::from_host(rt, {a_n}, ha), b = Tensor::from_host(rt, {b_n}, hb), c(rt, {c_n});
    DeviceBuffer cbuf = c.buffer();
    const size_t lda = sh.trans_a ? sh.m : sh.k, ldb = sh.trans_b ? sh.k : sh.n;
    const Trans ta = sh.trans_a ? Trans::yes : Trans::no, tb = sh.trans_b ? Trans::yes : Trans::no;
    const double dev = seconds_per_call(
        s.repeats,
        [&] {
          gemm(rt, ta, tb, sh.m, sh.n, sh.k, 1.f, a.buffer(), 0, lda, b.buffer(), 0, ldb, 0.f, cbuf, 0, sh.n);
        },
        [&] { rt.finish(); });
    const double flops = 2.0 * double(sh.m) * double(sh.n) * double(sh.k);
    double host = 0;
    if (host_blas_available())
      host = seconds_per_call(
          s.repeats,
          [&] {
            host_sgemm(sh.trans_a, sh.trans_b, sh.m, sh.n, sh.k, 1.f, ha.data(), lda, hb.data(), ldb, 0.f,
                       hc.data(), sh.n);
          },
          [] {});
    const bool model_shape = sh.label.find("³") == std::string::npos;
    auto add_row = [&](const std::string& label, const std::string& op, double seconds) {
      const double dev_g = flops / seconds * 1e-9, host_g = host > 0 ? flops / host * 1e-9 : 0;
      t.rows.push_back({Cell::str(label), Cell::str(op), Cell::num(double(sh.m), 0),
                        Cell::num(double(sh.n), 0), Cell::num(double(sh.k), 0), Cell::num(dev_g),
                        host > 0 ? Cell::num(host_g) : Cell::none(),
                        host > 0 ? Cell::num(dev_g / host_g, 2) : Cell::none(),
                        peak > 0 ? Cell::num(100.0 * dev_g / peak) : Cell::none()});
    };
    add_row(sh.count > 1 ? fmt::format("{} (×{} a step)", sh.label, sh.count) : sh.label,
            fmt::format("{}{}", sh.trans_a ? 'T' : 'N', sh.trans_b ? 'T' : 'N'), dev);
    double step_dev = dev;
    const bool transposed_a = sh.transposes_a && gemm_reads_a_transposed(rt, sh.m, sh.n, sh.k);
    if (transposed_a) {
      // What a Dense layer runs on this device: A (x, or dz for dx) transposed by anycl's kernel and
      // the product asked as TN; for dx also Wᵀ (B given transposed) made so.
      Tensor am = Tensor::from_host(rt, {sh.m, sh.k}, ha), at(rt, {sh.k, sh.m}), cm(rt, {sh.m, sh.n});
      Tensor bm = Tensor::from_host(rt, {sh.trans_b ? sh.n : sh.k, sh.trans_b ? sh.k : sh.n}, hb);
      Tensor bt(rt, {sh.trans_b ? sh.k : sh.n, sh.trans_b ? sh.n : sh.k});
      step_dev = seconds_per_call(
          s.repeats,
          [&] {
            transpose(am, at);
            if (sh.trans_b) transpose(bm, bt);
            matmul(at, Trans::yes, sh.trans_b ? bt : bm, Trans::no, cm);
          },
          [&] { rt.finish(); });
      add_row(sh.label + " as trained", sh.trans_b ? "Aᵀ,Bᵀ+TN" : "Aᵀ+TN", step_dev);
    } else if (model_shape && sh.trans_b && !sh.trans_a &&
               dense_dx_form(rt, sh.m, sh.n, sh.k) == DenseDxForm::transpose_w_gemm_nn) {
      // What training runs for dx on this device (tuned): Wᵀ copied, then GEMM NN.
      Tensor w = Tensor::from_host(rt, {sh.n, sh.k}, hb), wt(rt, {sh.k, sh.n});
      Tensor dz = Tensor::from_host(rt, {sh.m, sh.k}, ha), dx(rt, {sh.m, sh.n});
      step_dev = seconds_per_call(
          s.repeats,
          [&] {
            transpose(w, wt);
            matmul(dz, Trans::no, wt, Trans::no, dx);
          },
          [&] { rt.finish(); });
      add_row(sh.label + " as trained", "Wᵀ+NN", step_dev);
    }
    if (model_shape) model_dev += step_dev * double(sh.count), model_host += host * double(sh.count);
  }
  if (model_host > 0)
    t.notes.push_back(fmt::format(
        "the {} model's {} GEMMs of one step{}: device {:.2f} ms, host {:.2f} ms → device/host {:.2f}",
        s.gemm_model, model_shapes, " (\"as trained\" where a row says so)", model_dev * 1e3,
        model_host * 1e3, model_host / model_dev));
  t.notes.push_back("host: " + s.blas_note);
  t.notes.push_back(rt.stats().tuning_file.empty()
                        ? "CLBlast: default parameters (no `anycl tune` file for this device)"
                        : "CLBlast: tuned parameters from " + rt.stats().tuning_file);
  t.notes.push_back(peak_note);
  t.notes.push_back("small shapes (N=10, K=10) are bound by launch and padding overhead, not FLOPs");
  return t;
}

}  // namespace anycl::cli
