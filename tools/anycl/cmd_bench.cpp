// `anycl bench`: GEMM, bandwidth, latency and whole-training-step figures for the selected
// device, each beside the host baseline where one exists (OpenBLAS), measured in the same run.
// Warm-up runs are excluded; every figure is the median over repeats. The bandwidth and latency
// micro-benchmarks use Boost.Compute over the runtime's raw OpenCL handles, as an application would.
#include "anycl/opencl.hpp"  // first: the OpenCL target before Boost.Compute includes CL/cl.h

#include <fmt/format.h>
#include <boost/compute/buffer.hpp>
#include <boost/compute/context.hpp>
#include <boost/compute/kernel.hpp>
#include <boost/compute/program.hpp>

#include <chrono>
#include <cmath>
#include <memory>
#include <random>
#include <sstream>

#include "anycl/blas/blas.hpp"
#include "anycl/blas/tuning.hpp"
#include "anycl/data/dataset.hpp"
#include "anycl/error.hpp"
#include "anycl/nn/model_from_flags.hpp"
#include "anycl/nn/sequential.hpp"
#include "anycl/train/trainer.hpp"
#include "anycl/util/atomic_file.hpp"
#include "args.hpp"
#include "bench_breakdown.hpp"
#include "bench_cnn.hpp"
#include "bench_host_blas.hpp"
#include "bench_host_mlp.hpp"
#include "bench_parallel.hpp"
#include "bench_predict.hpp"
#include "bench_startup.hpp"
#include "bench_table.hpp"
#include "commands.hpp"
#include "device_flag.hpp"
#include "train_run.hpp"
#include "util/process.hpp"

namespace anycl::cli {
namespace {

constexpr const char* kUsage =
    "usage: anycl bench [gemm|bandwidth|latency|mlp|cnn|startup|predict|all] [flags]\n"
    "  Measures the selected device (median of repeats, warm-up excluded) beside host OpenBLAS.\n"
    "  gemm       SGEMM GFLOP/s at the reference model's shapes (--model mlp|cnn) and square sizes,\n"
    "             device and host\n"
    "  bandwidth  on-device copy and triad GB/s; host↔device GB/s, pageable and pinned\n"
    "  latency    empty-kernel round trip, enqueue rate, blocking-read round trip\n"
    "  mlp        reference-model training samples/s on the device (Trainer) and on the host\n"
    "  cnn        reference CNN (mnist_cnn) training samples/s and per-layer times beside the host\n"
    "             (not part of all: minutes on a CPU; --limit default 1280)\n"
    "  startup    process start → first training step, cold caches and warm (runs anycl train)\n"
    "  predict    batch-1 latency and throughput of the reference MLP and CNN through the C API,\n"
    "             beside onnxruntime on the ONNX export (not part of all; own flags: bench predict --help)\n"
    "  --device SPEC       device (default: best, or $ANYCL_DEVICE)\n"
    "  --json              one JSON object instead of tables\n"
    "  --repeats N         timed repeats per figure (default 5; mlp: timed epochs, default 3)\n"
    "  --sizes A,B,...     square GEMM sizes (default 256,512,1024,2048, and 4096 on GPUs)\n"
    "  --peak-gflops X     the device's FP32 peak, for the gemm table's % of peak column\n"
    "  --data DIR          mlp data set (default $ANYCL_DATA or /usr/share/datasets/fashion-mnist)\n"
    "  --limit N           mlp: training samples per timed epoch (default 12800 = 100 steps; 6400 with\n"
    "                      --devices/--distributed)\n"
    "  --devices LIST|all  mlp: data-parallel on these devices of this machine, beside one device alone:\n"
    "                      samples/s, scaling efficiency, a step split into compute and gradient exchange\n"
    "  --distributed       mlp: the same over MPI processes: mpirun -np N anycl bench mlp --distributed\n"
    "  --breakdown         mlp, cnn: one timed step command by command (each kernel and GEMM, share, gaps),\n"
    "                      from OpenCL profiling events (the profiled run is a little slower)\n"
    "  --profile FILE      mlp, cnn: also write the device timeline as Chrome trace JSON (open in Perfetto)\n"
    "  --conv-forward im2col  cnn: only the default Conv2D forward (im2col + GEMM), not also CLBlast's\n"
    "                      Convgemm (default both; Convgemm's training epochs take minutes on a CPU)\n"
    "Run under tools/count-launches.sh to count every OpenCL kernel launch (CLBlast's too).\n";

constexpr const char* kBenchKernels = R"CL(
__kernel void empty_kernel() {}
__kernel void triad(__global float* a, __global const float* b, __global const float* c, const float s,
                    const uint n) {
  const size_t i = get_global_id(0);  // 32-bit, Intel's runtime gathered and scattered: 13 GB/s
  if (i < n) a[i] = b[i] + s * c[i];
}
)CL";

namespace compute = boost::compute;
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

struct Settings {
  int repeats = 5;
  std::vector<size_t> sizes;
  double peak_gflops = 0;
  std::string data_dir;
  size_t limit = 12800;
  std::string blas_note;
  bool breakdown = false;               // mlp, cnn: profile the steps (--breakdown, --profile)
  std::string gemm_model = "mlp";       // gemm: whose GEMM shapes (--model)
  bool with_convgemm = true;            // cnn: also the CLBlast Convgemm forward (--conv-forward)
  std::string profile_path;             // mlp: where the trace goes (--profile)
  std::vector<Table>* extra = nullptr;  // tables a bench adds after its own (the breakdown)
};

// Median seconds per call of `run`: one warm-up call, then enough calls per repeat for ≥ 20 ms.
template <typename Run, typename Sync>
double seconds_per_call(int repeats, Run&& run, Sync&& sync) {
  auto t0 = Clock::now();
  run();
  sync();
  t0 = Clock::now();
  run();
  sync();
  const double once = std::max(since(t0), 1e-7);
  const int calls = std::max(1, int(0.02 / once));
  std::vector<double> samples;
  for (int r = 0; r < repeats; ++r) {
    t0 = Clock::now();
    for (int i = 0; i < calls; ++i) run();
    sync();
    samples.push_back(since(t0) / calls);
  }
  return median(samples);
}

std::vector<float> random_floats(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  std::vector<float> v(n);
  for (auto& x : v) x = u(rng);
  return v;
}

Table bench_gemm(Runtime& rt, const Settings& s) {
  Table t;
  t.name = "gemm";
  t.title = "SGEMM GFLOP/s: CLBlast on the device vs host CBLAS, same shapes, same run";
  t.columns = {"shape", "op", "m", "n", "k", "device GFLOP/s", "host GFLOP/s", "device/host", "% of peak"};
  ModelFlags flags;
  flags.layers = s.gemm_model == "cnn" ? kReferenceCnnLayers : "512,512";
  Sequential model(model_from_flags(flags, Shape{1, 28, 28}, 10));
  std::vector<GemmShape> shapes = model_gemm_shapes(model);
  const size_t model_shapes = shapes.size();
  model.build(rt, 128);  // which prepares its GEMMs on the runtime (the database's sets), as training does
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
                        s.peak_gflops > 0 ? Cell::num(100.0 * dev_g / s.peak_gflops) : Cell::none()});
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
  t.notes.push_back(s.peak_gflops > 0
                        ? fmt::format("peak {:.0f} GFLOP/s as given by --peak-gflops", s.peak_gflops)
                        : "% of peak needs --peak-gflops (OpenCL does not report FLOPs per cycle)");
  t.notes.push_back("small shapes (N=10, K=10) are bound by launch and padding overhead, not FLOPs");
  return t;
}

Table bench_bandwidth(Runtime& rt, const Settings& s) {
  Table t;
  t.name = "bandwidth";
  t.title = "Memory bandwidth, GB/s (10⁹ bytes/s)";
  t.columns = {"what", "MiB", "GB/s"};
  const size_t n = std::min<size_t>(size_t(16) << 20, rt.info().max_alloc_bytes / sizeof(float) / 2);
  const size_t bytes = n * sizeof(float);
  cl_context ctx = rt.context();
  cl_command_queue q = rt.queue();
  const compute::context context(ctx);  // retains the runtime's context for as long as it lives
  compute::buffer a(context, bytes), b(context, bytes), c(context, bytes);
  compute::program program = compute::program::create_with_source(kBenchKernels, context);
  program.build();
  compute::kernel triad(program, "triad");
  const float scale = 3.f;
  const cl_uint count = cl_uint(n);
  triad.set_arg(0, a);
  triad.set_arg(1, b);
  triad.set_arg(2, c);
  triad.set_arg(3, sizeof(float), &scale);
  triad.set_arg(4, sizeof(cl_uint), &count);
  std::vector<float> host(n, 1.f);
  auto check = [](cl_int st, const char* call) { detail::check_cl(st, call, "bench bandwidth"); };
  check(clEnqueueWriteBuffer(q, b.get(), CL_TRUE, 0, bytes, host.data(), 0, nullptr, nullptr),
        "clEnqueueWriteBuffer");
  check(clEnqueueWriteBuffer(q, c.get(), CL_TRUE, 0, bytes, host.data(), 0, nullptr, nullptr),
        "clEnqueueWriteBuffer");
  auto finish = [&] { rt.finish(); };
  auto row = [&](const std::string& what, double moved, double secs) {
    t.rows.push_back(
        {Cell::str(what), Cell::num(double(bytes) / (1 << 20), 0), Cell::num(moved / secs * 1e-9, 2)});
  };
  row("device copy (read+write)", 2.0 * bytes,
      seconds_per_call(
          s.repeats,
          [&] {
            check(clEnqueueCopyBuffer(q, b.get(), a.get(), 0, 0, bytes, 0, nullptr, nullptr),
                  "clEnqueueCopyBuffer");
          },
          finish));
  const size_t local = std::min<size_t>(256, rt.info().max_work_group_size),
               global = (n + local - 1) / local * local;
  row("device triad a=b+s·c", 3.0 * bytes,
      seconds_per_call(
          s.repeats,
          [&] {
            check(clEnqueueNDRangeKernel(q, triad.get(), 1, nullptr, &global, &local, 0, nullptr, nullptr),
                  "clEnqueueNDRangeKernel");
          },
          finish));
  row("host→device pageable", double(bytes),
      seconds_per_call(
          s.repeats,
          [&] {
            check(clEnqueueWriteBuffer(q, a.get(), CL_TRUE, 0, bytes, host.data(), 0, nullptr, nullptr),
                  "clEnqueueWriteBuffer");
          },
          [] {}));
  row("device→host pageable", double(bytes),
      seconds_per_call(
          s.repeats,
          [&] {
            check(clEnqueueReadBuffer(q, a.get(), CL_TRUE, 0, bytes, host.data(), 0, nullptr, nullptr),
                  "clEnqueueReadBuffer");
          },
          [] {}));
  // Pinned: host memory the driver allocated (CL_MEM_ALLOC_HOST_PTR), mapped once.
  cl_int st = CL_SUCCESS;
  cl_mem pinned = clCreateBuffer(ctx, CL_MEM_ALLOC_HOST_PTR | CL_MEM_READ_WRITE, bytes, nullptr, &st);
  check(st, "clCreateBuffer(CL_MEM_ALLOC_HOST_PTR)");
  compute::buffer pinned_buffer(pinned, false);
  void* p =
      clEnqueueMapBuffer(q, pinned, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, bytes, 0, nullptr, nullptr, &st);
  check(st, "clEnqueueMapBuffer");
  row("host→device pinned", double(bytes),
      seconds_per_call(
          s.repeats,
          [&] {
            check(clEnqueueWriteBuffer(q, a.get(), CL_TRUE, 0, bytes, p, 0, nullptr, nullptr),
                  "clEnqueueWriteBuffer");
          },
          [] {}));
  row("device→host pinned", double(bytes),
      seconds_per_call(
          s.repeats,
          [&] {
            check(clEnqueueReadBuffer(q, a.get(), CL_TRUE, 0, bytes, p, 0, nullptr, nullptr),
                  "clEnqueueReadBuffer");
          },
          [] {}));
  check(clEnqueueUnmapMemObject(q, pinned, p, 0, nullptr, nullptr), "clEnqueueUnmapMemObject");
  rt.finish();
  t.notes.push_back("bound by memory bandwidth; on a CPU device host↔device is a memcpy within the same RAM");
  return t;
}

Table bench_latency(Runtime& rt, const Settings& s) {
  Table t;
  t.name = "latency";
  t.title = "Launch and synchronisation latency";
  t.columns = {"what", "value", "unit"};
  const compute::context context(rt.context());
  compute::program program = compute::program::create_with_source(kBenchKernels, context);
  program.build();
  compute::kernel empty(program, "empty_kernel");
  cl_command_queue q = rt.queue();
  const size_t one = 1;
  auto launch = [&] {
    detail::check_cl(clEnqueueNDRangeKernel(q, empty.get(), 1, nullptr, &one, &one, 0, nullptr, nullptr),
                     "clEnqueueNDRangeKernel", "bench latency");
  };
  std::vector<double> round;
  for (int i = 0; i < 10; ++i) launch(), rt.finish();
  for (int i = 0; i < 50 * s.repeats; ++i) {
    const auto t0 = Clock::now();
    launch();
    rt.finish();
    round.push_back(since(t0));
  }
  t.rows.push_back(
      {Cell::str("empty kernel: enqueue → finish"), Cell::num(median(round) * 1e6, 1), Cell::str("µs")});
  std::vector<double> rates;
  for (int r = 0; r < s.repeats; ++r) {
    const int n = 1000;
    const auto t0 = Clock::now();
    for (int i = 0; i < n; ++i) launch();
    const double enqueue = since(t0);
    rt.finish();
    rates.push_back(n / since(t0));
    if (r == 0) (void)enqueue;
  }
  t.rows.push_back({Cell::str("back-to-back empty kernels (1000, then finish)"),
                    Cell::num(median(rates) / 1e3, 1), Cell::str("k launches/s")});
  compute::buffer small(context, 64);
  float value = 0;
  std::vector<double> reads;
  for (int i = 0; i < 50 * s.repeats; ++i) {
    const auto t0 = Clock::now();
    detail::check_cl(
        clEnqueueReadBuffer(q, small.get(), CL_TRUE, 0, sizeof value, &value, 0, nullptr, nullptr),
        "clEnqueueReadBuffer", "bench latency");
    reads.push_back(since(t0));
  }
  t.rows.push_back(
      {Cell::str("blocking 4-byte read round trip"), Cell::num(median(reads) * 1e6, 1), Cell::str("µs")});
  t.notes.push_back(
      "a training step of the reference model enqueues 13 anycl kernels and 8 GEMMs (plus CLBlast's own "
      "helper kernels): at these latencies the launch cost per step is small beside the GEMMs on a CPU "
      "device, and it is what bounds tiny models on a GPU");
  return t;
}

// The total number of clEnqueueNDRangeKernel calls so far, when running under the launch counter shim.
long long shim_launches() {
  using Fn = unsigned long long (*)();
  static Fn fn = reinterpret_cast<Fn>(detail::platform::find_loaded_symbol("anycl_cl_launch_count"));
  return fn ? (long long)fn() : -1;
}

Table bench_mlp(Runtime& rt, const Settings& s) {
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

std::vector<size_t> parse_sizes(const std::string& text) {
  std::vector<size_t> out;
  std::istringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    char* end = nullptr;
    const long long v = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end || v < 1 || v > 16384)
      throw UsageError(fmt::format("--sizes must be comma-separated sizes in [1, 16384], got '{}'", text));
    out.push_back(size_t(v));
  }
  return out;
}

}  // namespace

int run_bench(int argc, char** argv) {
  if (argc > 2 && std::string(argv[2]) == "predict")
    return run_bench_predict(argc, argv);  // flags of its own
  const Args args(argc, argv, 2,
                  {"--device", "--repeats", "--sizes", "--peak-gflops", "--data", "--limit", "--devices",
                   "--profile", "--model", "--conv-forward"},
                  {"--json", "--help", "--distributed", "--breakdown"});
  if (args.has("--help")) return fmt::print("{}", kUsage), 0;
  std::string which = args.positional().empty() ? "all" : args.positional().front();
  if (args.positional().size() > 1) throw UsageError("unexpected argument '" + args.positional()[1] + "'");
  if (which == "predict") throw UsageError("name predict first, then its flags: anycl bench predict [flags]");
  if (which != "all" && which != "gemm" && which != "bandwidth" && which != "latency" && which != "mlp" &&
      which != "startup" && which != "cnn")
    throw UsageError("unknown benchmark '" + which +
                     "' — choose gemm, bandwidth, latency, mlp, cnn, startup, predict or all");
  Settings s;
  s.repeats = int(args.get_int("--repeats", which == "mlp" || which == "cnn" ? 3 : 5, 1, 1000));
  s.peak_gflops = args.get_double("--peak-gflops", 0, 0, 1e9);
  s.gemm_model = args.get("--model", "mlp");
  if (s.gemm_model != "mlp" && s.gemm_model != "cnn") throw UsageError("--model must be mlp or cnn");
  if (args.has("--model") && which != "gemm")
    throw UsageError(
        "--model picks the shapes of `anycl bench gemm`; `bench mlp` and `bench cnn` name their model");
  const std::string conv_forward = args.get("--conv-forward", "both");
  if (conv_forward != "both" && conv_forward != "im2col")
    throw UsageError("--conv-forward must be both or im2col");
  if (args.has("--conv-forward") && which != "cnn")
    throw UsageError("--conv-forward is a flag of `anycl bench cnn`");
  s.with_convgemm = conv_forward == "both";
  s.data_dir = args.get("--data");
  s.limit = size_t(args.get_int("--limit", which == "cnn" ? 1280 : 12800, 128, 1ll << 40));
  s.profile_path = args.get("--profile");
  s.breakdown = args.has("--breakdown") || args.has("--profile");
  if (s.breakdown && which != "mlp" && which != "cnn")
    throw UsageError(
        "--breakdown/--profile profile training steps: use `anycl bench mlp --breakdown` or `anycl bench cnn "
        "--breakdown`");
  if (args.has("--profile") && s.profile_path.empty()) throw UsageError("--profile needs a file name");
  if (!s.profile_path.empty()) check_output_file(s.profile_path);
  std::vector<Table> extra;
  s.extra = &extra;
  if (args.has("--devices") || args.has("--distributed")) {
    if (which != "mlp")
      throw UsageError(
          "--devices/--distributed measure data-parallel training: use `anycl bench mlp --devices LIST`");
    if (s.breakdown)
      throw UsageError("--breakdown/--profile profile one device: leave out --devices/--distributed");
    ParallelBenchOptions p;
    if (args.has("--devices")) p.device_specs = parse_device_list(args.get("--devices"));
    p.device_spec = args.get("--device");
    p.distributed = args.has("--distributed");
    p.repeats = s.repeats;
    p.data_dir = s.data_dir;
    p.limit = size_t(args.get_int("--limit", 6400, 128, 1ll << 40));
    p.json = args.has("--json");
    return run_bench_parallel(p);
  }
  const DeviceInfo device = select_device_or_usage_error(args);
  s.sizes = args.has("--sizes")              ? parse_sizes(args.get("--sizes"))
            : device.type == DeviceType::gpu ? std::vector<size_t>{256, 512, 1024, 2048, 4096}
                                             : std::vector<size_t>{256, 512, 1024, 2048};
  ensure_fast_openblas_core(argv, s.blas_note);  // may re-execute this process
  s.blas_note = host_blas_description() + "; " + s.blas_note;

  RuntimeOptions options;
  options.device_spec = std::to_string(device.index);
  options.profiling = s.breakdown;
  Runtime rt(options);
  const bool json = args.has("--json");
  if (!json) fmt::print("anycl bench {} on {} — host BLAS: {}\n", which, rt.info().name, s.blas_note);
  std::vector<Table> tables;
  auto run = [&](const char* name, Table (*fn)(Runtime&, const Settings&)) {
    if (which != "all" && which != name) return;
    tables.push_back(fn(rt, s));
    if (!json) print_table(tables.back(), rt.info());
    for (Table& t : extra) {
      tables.push_back(std::move(t));
      if (!json) print_table(tables.back(), rt.info());
    }
    extra.clear();
  };
  run("gemm", bench_gemm);
  run("bandwidth", bench_bandwidth);
  run("latency", bench_latency);
  run("mlp", bench_mlp);
  if (which == "cnn")
    run("cnn", [](Runtime& r, const Settings& st) {
      return bench_cnn(r, st.data_dir, st.limit, st.repeats, st.with_convgemm,
                       st.breakdown ? st.extra : nullptr, st.profile_path);
    });
  run("startup",
      [](Runtime& r, const Settings& st) { return bench_startup(r.info(), st.data_dir, st.repeats); });
  if (json) print_json(tables, rt.info(), s.blas_note);
  return 0;
}

}  // namespace anycl::cli
