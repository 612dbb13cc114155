// `anycl bench`: GEMM, bandwidth, latency and whole-training-step figures for the selected
// device, each beside the host baseline where one exists (OpenBLAS), measured in the same run.
// Warm-up runs are excluded; every figure is the median over repeats. This file parses the flags and
// runs the benchmarks asked for (bench_gemm, bench_bandwidth, bench_latency, bench_mlp, bench_cnn, …);
// the bandwidth and latency ones use Boost.Compute over the runtime's raw OpenCL handles.
#include <fmt/format.h>

#include <sstream>

#include "anycl/error.hpp"
#include "anycl/util/atomic_file.hpp"
#include "args.hpp"
#include "bench_bandwidth.hpp"
#include "bench_cnn.hpp"
#include "bench_gemm.hpp"
#include "bench_host_blas.hpp"
#include "bench_latency.hpp"
#include "bench_mlp.hpp"
#include "bench_parallel.hpp"
#include "bench_predict.hpp"
#include "bench_startup.hpp"
#include "bench_table.hpp"
#include "commands.hpp"
#include "device_flag.hpp"
#include "train_run.hpp"

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
    "             (not part of all: minutes on a CPU; --limit default 1280); --model bncnn: the\n"
    "             BatchNorm CNN beside the same CNN without BatchNorm, and BatchNorm's step cost\n"
    "  startup    process start → first training step, cold caches and warm (runs anycl train)\n"
    "  predict    batch-1 latency and throughput of the reference MLP and CNN through the C API,\n"
    "             beside onnxruntime on the ONNX export (not part of all; own flags: bench predict --help)\n"
    "  --device SPEC       device (default: best, or $ANYCL_DEVICE)\n"
    "  --json              one JSON object instead of tables\n"
    "  --repeats N         timed repeats per figure (default 5; mlp: timed epochs, default 3)\n"
    "  --sizes A,B,...     square GEMM sizes (default 256,512,1024,2048, and 4096 on GPUs)\n"
    "  --peak-gflops X     the device's FP32 peak for the gemm table's % of peak column (default: measured)\n"
    "  --data DIR          mlp data set (default $ANYCL_DATA or /usr/share/datasets/fashion-mnist)\n"
    "  --limit N           mlp: training samples per timed epoch (default 12800 = 100 steps; 6400 with\n"
    "                      --devices/--distributed)\n"
    "  --devices LIST|all  mlp: data-parallel on these devices of this machine, beside one device alone:\n"
    "                      samples/s, scaling efficiency, a step split into compute and gradient exchange\n"
    "  --distributed       mlp: the same over MPI processes: mpirun -np N anycl bench mlp --distributed\n"
    "  --breakdown         mlp, cnn: one timed step command by command (each kernel and GEMM, share, gaps),\n"
    "                      from OpenCL profiling events (the profiled run is a little slower)\n"
    "  --profile FILE      mlp, cnn: also write the device timeline as Chrome trace JSON (open in Perfetto)\n"
    "  --conv-forward LIST cnn: the Conv2D algorithms to train, in turn (the first is profiled): default\n"
    "                      (direct kernels for a patch C·K·K ≤ 32 on a CPU, else Winograd for 3×3 at\n"
    "                      stride 1 on a CPU, else im2col + GEMM), gemm (im2col + GEMM for every\n"
    "                      convolution), direct (direct kernels for a short patch on any device),\n"
    "                      winograd (Winograd F(4×4,3×3) forward for 3×3 at stride 1 on any device),\n"
    "                      convgemm (CLBlast's Convgemm forward: minutes an epoch on a CPU);\n"
    "                      both = default,convgemm (the default), im2col = default alone\n"
    "Run under tools/count-launches.sh to count every OpenCL kernel launch (CLBlast's too).\n";

// --conv-forward's comma-separated list (both and im2col: the names it had before direct kernels).
std::vector<ConvForward> parse_conv_forwards(const std::string& text) {
  if (text == "both") return {ConvForward::automatic, ConvForward::convgemm};
  if (text == "im2col") return {ConvForward::automatic};
  std::vector<ConvForward> out;
  std::istringstream in(text);
  std::string part;
  while (std::getline(in, part, ',')) {
    if (part == "default")
      out.push_back(ConvForward::automatic);
    else if (part == "gemm")
      out.push_back(ConvForward::im2col_gemm);
    else if (part == "direct")
      out.push_back(ConvForward::direct);
    else if (part == "winograd")
      out.push_back(ConvForward::winograd);
    else if (part == "convgemm")
      out.push_back(ConvForward::convgemm);
    else
      throw UsageError(
          "--conv-forward takes default, gemm, direct, winograd and convgemm, comma-separated (or both, "
          "im2col), got '" +
          part + "'");
  }
  if (out.empty())
    throw UsageError("--conv-forward needs at least one of default, gemm, direct, winograd, convgemm");
  return out;
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
  BenchSettings s;
  s.repeats = int(args.get_int("--repeats", which == "mlp" || which == "cnn" ? 3 : 5, 1, 1000));
  s.peak_gflops = args.get_double("--peak-gflops", 0, 0, 1e9);
  s.gemm_model = args.get("--model", which == "cnn" ? "cnn" : "mlp");
  if (args.has("--model") && which != "gemm" && which != "cnn")
    throw UsageError(
        "--model picks the shapes of `anycl bench gemm` (mlp|cnn) or the model of `anycl bench cnn` "
        "(cnn|bncnn); "
        "`bench mlp` names its model");
  if (which == "cnn" ? s.gemm_model != "cnn" && s.gemm_model != "bncnn"
                     : s.gemm_model != "mlp" && s.gemm_model != "cnn")
    throw UsageError(which == "cnn"
                         ? "--model must be cnn or bncnn for `anycl bench cnn`, got '" + s.gemm_model + "'"
                         : "--model must be mlp or cnn, got '" + s.gemm_model + "'");
  if (args.has("--conv-forward") && which != "cnn")
    throw UsageError("--conv-forward is a flag of `anycl bench cnn`");
  s.conv_forwards = parse_conv_forwards(args.get("--conv-forward", "both"));
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
  auto run = [&](const char* name, Table (*fn)(Runtime&, const BenchSettings&)) {
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
    run("cnn", [](Runtime& r, const BenchSettings& st) {
      return bench_cnn(r, st.data_dir, st.limit, st.repeats, st.conv_forwards,
                       st.breakdown ? st.extra : nullptr, st.profile_path, st.gemm_model);
    });
  run("startup",
      [](Runtime& r, const BenchSettings& st) { return bench_startup(r.info(), st.data_dir, st.repeats); });
  if (json) print_json(tables, rt.info(), s.blas_note);
  return 0;
}

}  // namespace anycl::cli
