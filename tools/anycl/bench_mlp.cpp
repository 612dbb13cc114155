// `anycl bench mlp`: the reference model's training throughput through the real Trainer beside the
// same step on the host (OpenBLAS), with launches, GEMM calls and host waits per step.
#include "bench_mlp.hpp"

#include <fmt/format.h>

#include <random>

#include "anycl/data/dataset.hpp"
#include "anycl/nn/model_from_flags.hpp"
#include "anycl/nn/sequential.hpp"
#include "anycl/optim/optimizer.hpp"
#include "anycl/train/trainer.hpp"
#include "bench_breakdown.hpp"
#include "bench_host_blas.hpp"
#include "bench_host_mlp.hpp"
#include "util/process.hpp"

namespace anycl::cli {
namespace {

// The total number of clEnqueueNDRangeKernel calls so far, when running under the launch counter shim.
long long shim_launches() {
  using Fn = unsigned long long (*)();
  static Fn fn = reinterpret_cast<Fn>(detail::platform::find_loaded_symbol("anycl_cl_launch_count"));
  return fn ? (long long)fn() : -1;
}

}  // namespace

Table bench_mlp(Runtime& rt, const BenchSettings& s) {
  Table t;
  t.name = "mlp";
  t.title = "Reference model (784-512-512-10, ReLU, dropout 0.2, RMSprop, batch 128): training throughput";
  t.columns = {"where",          "samples/s",       "epoch s (60000)",
               "launches/step",  "GEMM calls/step", "all CL launches/step",
               "host waits/step"};
  data::LoadOptions load;
  load.limit = s.limit;
  const data::DataSplits splits = data::load_folder(s.data_dir, load);
  const size_t batch = 128, count = splits.train.count, steps = (count + batch - 1) / batch;

  // Device: the real Trainer. Epoch 1 is warm-up (CLBlast compiles), the rest are timed.
  Sequential model(reference_mlp(splits.train.features(), splits.train.num_classes));
  auto optimizer = make_optimizer(rt, model.parameter_count(), {"rmsprop"});
  model.build(rt, batch);
  model.initialize(1);
  const DeviceDataset train(rt, splits.train);
  TrainOptions opts;
  opts.epochs = size_t(1 + s.repeats);
  opts.batch = batch;
  Trainer trainer(model, *optimizer, opts);
  std::vector<double> dev_rates;
  long long shim_before = -1, shim_after = -1;
  RuntimeCounters counters_after_warmup;
  trainer.on_epoch_end = [&](const EpochStats& e) {
    if (e.epoch == 1) {
      shim_before = shim_launches();
      counters_after_warmup = trainer.step_counters();
    } else {
      dev_rates.push_back(e.samples_per_second);
    }
    if (e.epoch == opts.epochs) shim_after = shim_launches();
  };
  trainer.fit(train);
  const double timed_steps = double(steps * s.repeats);
  const RuntimeCounters& c = trainer.step_counters();
  const double dev_sps = median(dev_rates);
  auto per_step = [&](uint64_t after, uint64_t before) {
    return Cell::num(double(after - before) / timed_steps, 1);
  };
  t.rows.push_back(
      {Cell::str("device: " + rt.info().name), Cell::num(dev_sps, 0), Cell::num(60000.0 / dev_sps, 2),
       per_step(c.kernel_launches, counters_after_warmup.kernel_launches),
       per_step(c.gemm_calls, counters_after_warmup.gemm_calls),
       shim_before >= 0 ? Cell::num(double(shim_after - shim_before) / timed_steps, 1) : Cell::none(),
       per_step(c.host_waits, counters_after_warmup.host_waits)});
  if (c.transposes > counters_after_warmup.transposes)
    t.notes.push_back(
        fmt::format("{:.1f} transposes/step by anycl's kernel: Dense's operands, where the device's GEMM "
                    "reads them transposed (the indirect kernel) or `anycl tune` measured dz·Wᵀ faster as "
                    "Wᵀ + GEMM NN",
                    double(c.transposes - counters_after_warmup.transposes) / timed_steps));

  // Host: the same step with OpenBLAS; one warm-up epoch, then the same number of timed epochs.
  HostMlp host({splits.train.features(), 512, 512, splits.train.num_classes}, batch, 0.2f);
  const std::vector<float> x_all = splits.train.normalized(0, count);
  std::vector<uint32_t> order(count);
  for (size_t i = 0; i < count; ++i) order[i] = uint32_t(i);
  std::vector<float> x(batch * splits.train.features());
  std::vector<uint8_t> labels(batch);
  std::mt19937 rng(1);
  std::vector<double> host_rates;
  for (int epoch = 0; epoch <= s.repeats; ++epoch) {
    std::shuffle(order.begin(), order.end(), rng);
    const auto t0 = Clock::now();
    for (size_t first = 0; first < count; first += batch) {
      const size_t rows = std::min(batch, count - first), f = splits.train.features();
      for (size_t r = 0; r < rows; ++r) {  // the gather, as the device does it
        std::copy_n(&x_all[size_t(order[first + r]) * f], f, &x[r * f]);
        labels[r] = splits.train.labels[order[first + r]];
      }
      host.step(x.data(), labels.data(), rows);
    }
    if (epoch > 0) host_rates.push_back(double(count) / since(t0));
  }
  const double host_sps = median(host_rates);
  t.rows.push_back(
      {Cell::str(host_blas_available() ? "host: OpenBLAS step" : "host: plain loops (no OpenBLAS)"),
       Cell::num(host_sps, 0), Cell::num(60000.0 / host_sps, 2), Cell::none(), Cell::num(8, 0), Cell::none(),
       Cell::num(0, 0)});
  t.rows.push_back({Cell::str("device / host"), Cell::num(dev_sps / host_sps, 2), Cell::none(), Cell::none(),
                    Cell::none(), Cell::none(), Cell::none()});
  t.notes.push_back(
      fmt::format("{} training samples per timed epoch ({} steps), median of {} epochs after one warm-up "
                  "epoch; epoch s = 60000 / samples/s",
                  count, steps, s.repeats));
  t.notes.push_back("host: " + s.blas_note);
  t.notes.push_back(rt.stats().tuning_file.empty()
                        ? "CLBlast: default parameters (no `anycl tune` file)"
                        : "CLBlast: tuned parameters from " + rt.stats().tuning_file);
  if (shim_before < 0)
    t.notes.push_back("all CL launches/step (CLBlast's included) needs tools/count-launches.sh");
  if (s.breakdown) {
    t.notes.push_back("profiled run (--breakdown/--profile): OpenCL profiling events on every command");
    s.extra->push_back(step_breakdown_table(rt, int64_t(steps), s.profile_path));  // epoch 1 is warm-up
  }
  return t;
}

}  // namespace anycl::cli
