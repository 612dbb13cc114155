// `anycl bench predict`: the measuring goes through the C API (anycl.h) exactly as an embedding
// application calls it — create, train briefly, then anycl_predict into a caller buffer — and
// onnxruntime runs the model's ONNX export (anycl_model_export_onnx) in a child Python process.
#include "bench_predict.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>

#include "anycl/anycl.h"
#include "anycl/error.hpp"
#include "anycl/nn/model_from_flags.hpp"
#include "args.hpp"
#include "bench_table.hpp"
#include "blas/tuning/tune_worker.hpp"
#include "child_process.hpp"
#include "device_flag.hpp"
#include "runtime/kernel_sources.hpp"
#include "util/platform.hpp"

namespace anycl::detail {
/// tools/onnxruntime_predict.py, embedded at build time (tools/CMakeLists.txt).
const std::vector<KernelSource>& embedded_bench_scripts();
}  // namespace anycl::detail

namespace anycl::cli {
namespace {

constexpr const char* kUsage =
    "usage: anycl bench predict [flags]\n"
    "  Batch-1 predict latency (p50, p99) and batch throughput of the reference MLP (784-512-512-10)\n"
    "  and CNN (mnist_cnn) through the C API (anycl_predict), beside onnxruntime (CPU execution\n"
    "  provider, default settings) on the same model's ONNX export, in the same run. The weights come\n"
    "  from one epoch on random data (the figures do not depend on their values).\n"
    "  --device SPEC     device (default: best, or $ANYCL_DEVICE)\n"
    "  --model LIST      mlp, cnn or mlp,cnn (default)\n"
    "  --count N         timed batch-1 calls (default 1000), after --warmup N calls (default 100)\n"
    "  --batches LIST    batch sizes for throughput (default 128,1024)\n"
    "  --repeats N       throughput: timed repeats of at least 0.2 s, median (default 3)\n"
    "  --json            one JSON object instead of the table\n"
    "onnxruntime: Python from $ANYCL_ONNX_PYTHON, else build/onnx-venv (tools/setup.sh), else python3\n"
    "on PATH; without it the table says so and shows anycl alone.\n";

using Clock = std::chrono::steady_clock;

struct Settings {
  size_t count = 1000, warmup = 100, repeats = 3;
  std::vector<size_t> batches;
};

// One model of the bench, described as an application would describe it to anycl_model_create.
struct ModelCase {
  const char* name;
  const char* title;
  const char* layers;
  float dropout;
  size_t shape[3];
};

const ModelCase kCases[] = {
    {"mlp", "MLP 784-512-512-10", "512,512", 0.2f, {784, 0, 0}},
    {"cnn", "CNN mnist_cnn", kReferenceCnnLayers, 0.f, {1, 28, 28}},  // the list names its dropouts
};
constexpr size_t kClasses = 10;

struct Figures {
  double p50_ms = 0, p99_ms = 0;
  std::vector<double> samples_per_s;  // per Settings::batches
};

void check(anycl_status status, const char* call) {
  if (status != ANYCL_OK)
    throw Error(fmt::format("{} failed ({}): {}", call, anycl_status_name(status), anycl_last_error()));
}

template <typename T, void (*Destroy)(T*)>
struct Destroyer {
  void operator()(T* p) const { Destroy(p); }
};
using RuntimePtr = std::unique_ptr<anycl_runtime, Destroyer<anycl_runtime, anycl_runtime_destroy>>;
using ModelPtr = std::unique_ptr<anycl_model, Destroyer<anycl_model, anycl_model_destroy>>;
using DatasetPtr = std::unique_ptr<anycl_dataset, Destroyer<anycl_dataset, anycl_dataset_destroy>>;

std::vector<float> random_inputs(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.f, 1.f);
  std::vector<float> v(n);
  for (float& x : v) x = u(rng);
  return v;
}

size_t features(const ModelCase& c) {
  return c.shape[0] * std::max<size_t>(c.shape[1], 1) * std::max<size_t>(c.shape[2], 1);
}

// The model, with weights from one epoch on 256 random samples (latency does not depend on them).
ModelPtr trained_model(anycl_runtime* rt, const ModelCase& c) {
  anycl_model_options o;
  anycl_model_options_init(&o);
  o.layers = c.layers;
  o.dropout = c.dropout;
  std::copy(c.shape, c.shape + 3, o.input_shape);
  o.outputs = kClasses;
  anycl_model* m = nullptr;
  check(anycl_model_create(&o, &m), "anycl_model_create");
  ModelPtr model(m);
  const size_t n = 256, d = features(c);
  const std::vector<float> x = random_inputs(n * d, 2);
  std::vector<int32_t> labels(n);
  for (size_t i = 0; i < n; ++i) labels[i] = int32_t(i % kClasses);
  anycl_dataset* ds = nullptr;
  check(anycl_dataset_create_classes(x.data(), n, d, labels.data(), kClasses, &ds),
        "anycl_dataset_create_classes");
  DatasetPtr data(ds);
  anycl_train_options t;
  anycl_train_options_init(&t);
  t.epochs = 1;
  check(anycl_train(model.get(), rt, data.get(), nullptr, &t, nullptr, 0, nullptr, nullptr), "anycl_train");
  return model;
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

// The nearest-rank percentile of sorted values (tools/onnxruntime_predict.py does the same).
double percentile(const std::vector<double>& sorted, double p) {
  const size_t rank = std::max<size_t>(1, size_t(std::ceil(p / 100.0 * double(sorted.size()))));
  return sorted[rank - 1];
}

// Samples/s of `call(batch)`: the median over repeats of at least 2 calls and 0.2 s each.
template <typename Call>
double throughput(size_t batch, size_t repeats, Call&& call) {
  call();  // warm-up (a larger batch rebuilds the device copy once)
  std::vector<double> rates;
  for (size_t r = 0; r < repeats; ++r) {
    size_t calls = 0;
    const auto t0 = Clock::now();
    double elapsed = 0;
    do {
      call();
      ++calls;
      elapsed = seconds_since(t0);
    } while (calls < 2 || elapsed < 0.2);
    rates.push_back(double(batch * calls) / elapsed);
  }
  return median(rates);
}

Figures measure_anycl(anycl_model* model, anycl_runtime* rt, size_t d, const Settings& s) {
  Figures f;
  const std::vector<float> x1 = random_inputs(d, 3);
  std::vector<float> y1(kClasses);
  auto predict1 = [&] {
    check(anycl_predict(model, rt, x1.data(), 1, y1.data(), y1.size()), "anycl_predict");
  };
  for (size_t i = 0; i < s.warmup; ++i) predict1();
  std::vector<double> times(s.count);
  for (double& t : times) {
    const auto t0 = Clock::now();
    predict1();
    t = seconds_since(t0);
  }
  std::sort(times.begin(), times.end());
  f.p50_ms = percentile(times, 50) * 1e3;
  f.p99_ms = percentile(times, 99) * 1e3;
  for (size_t batch : s.batches) {
    const std::vector<float> x = random_inputs(batch * d, 4);
    std::vector<float> y(batch * kClasses);
    f.samples_per_s.push_back(throughput(batch, s.repeats, [&] {
      check(anycl_predict(model, rt, x.data(), batch, y.data(), y.size()), "anycl_predict");
    }));
  }
  return f;
}

// $ANYCL_ONNX_PYTHON, else the venv tools/setup.sh makes, else python3 on PATH ("" if none).
std::string onnx_python() {
  namespace fs = std::filesystem;
  if (auto p = detail::platform::get_env("ANYCL_ONNX_PYTHON"); p && !p->empty()) return *p;
  std::error_code ec;
  if (fs::exists(ANYCL_ONNX_VENV_PYTHON, ec)) return ANYCL_ONNX_VENV_PYTHON;
  std::istringstream path(detail::platform::get_env("PATH").value_or(""));
  for (std::string dir; std::getline(path, dir, ':');)
    if (!dir.empty() && fs::exists(fs::path(dir) / "python3", ec))
      return (fs::path(dir) / "python3").string();
  return "";
}

struct OrtResult {
  std::string engine;  // "onnxruntime 1.x", or empty when it did not run
  std::string why;     // why not
  Figures figures;
};

OrtResult measure_onnxruntime(anycl_model* model, const Settings& s) {
  OrtResult r;
  const std::string python = onnx_python();
  if (python.empty()) return r.why = "no Python found (set ANYCL_ONNX_PYTHON or run tools/setup.sh)", r;
  const detail::ScratchDir dir;  // the library's (src/blas/tuning/tune_worker.hpp)
  const std::string onnx = dir.file("model.onnx"), script = dir.file("onnxruntime_predict.py");
  const anycl_status exported = anycl_model_export_onnx(model, onnx.c_str());
  if (exported == ANYCL_ERROR_UNSUPPORTED) return r.why = anycl_last_error(), r;
  check(exported, "anycl_model_export_onnx");
  std::ofstream(script, std::ios::binary) << detail::embedded_bench_scripts().at(0).source;
  std::string batches;
  for (size_t b : s.batches) batches += (batches.empty() ? "" : ",") + std::to_string(b);
  ProcessSpec child;
  child.args = {python,
                script,
                onnx,
                "--count",
                std::to_string(s.count),
                "--warmup",
                std::to_string(s.warmup),
                "--batches",
                batches,
                "--repeats",
                std::to_string(s.repeats)};
  std::string output;
  ChildExit e;
  try {
    e = run_captured(child, output);
  } catch (const Error& err) {
    return r.why = err.what(), r;
  }
  while (!output.empty() && (output.back() == '\n' || output.back() == '\r')) output.pop_back();
  const std::string last =
      output.substr(output.rfind('\n') == std::string::npos ? 0 : output.rfind('\n') + 1);
  if (e.code == 77) return r.why = last, r;
  if (!e.ok()) return r.why = fmt::format("{} {} ended with {}: {}", python, script, e.describe(), last), r;
  try {
    const auto j = nlohmann::json::parse(last);
    r.figures.p50_ms = j.at("p50_ms").get<double>();
    r.figures.p99_ms = j.at("p99_ms").get<double>();
    for (size_t b : s.batches)
      r.figures.samples_per_s.push_back(j.at("throughput").at(std::to_string(b)).get<double>());
    r.engine = j.at("engine").get<std::string>();
  } catch (const std::exception& err) {
    r.why = fmt::format("unreadable output from {} ({}): {}", script, err.what(), last);
  }
  return r;
}

std::vector<Cell> row(const std::string& model, const std::string& engine, const Figures* f, size_t batches) {
  std::vector<Cell> cells{Cell::str(model), Cell::str(engine)};
  cells.push_back(f ? Cell::num(f->p50_ms, 3) : Cell::none());
  cells.push_back(f ? Cell::num(f->p99_ms, 3) : Cell::none());
  for (size_t i = 0; i < batches; ++i) cells.push_back(f ? Cell::num(f->samples_per_s[i], 0) : Cell::none());
  return cells;
}

std::vector<size_t> parse_batches(const std::string& text) {
  std::vector<size_t> out;
  std::istringstream in(text);
  for (std::string part; std::getline(in, part, ',');) {
    char* end = nullptr;
    const long long v = std::strtoll(part.c_str(), &end, 10);
    if (part.empty() || *end || v < 1 || v > 65536)
      throw UsageError(fmt::format("--batches must be comma-separated sizes in [1, 65536], got '{}'", text));
    out.push_back(size_t(v));
  }
  return out;
}

}  // namespace

int run_bench_predict(int argc, char** argv) {
  const Args args(argc, argv, 3, {"--device", "--count", "--warmup", "--batches", "--repeats", "--model"},
                  {"--json", "--help"});
  if (args.has("--help")) return fmt::print("{}", kUsage), 0;
  if (!args.positional().empty()) throw UsageError("unexpected argument '" + args.positional().front() + "'");
  Settings s;
  s.count = size_t(args.get_int("--count", 1000, 1, 10000000));
  s.warmup = size_t(args.get_int("--warmup", 100, 0, 10000000));
  s.repeats = size_t(args.get_int("--repeats", 3, 1, 1000));
  s.batches = parse_batches(args.get("--batches", "128,1024"));
  const std::string models = args.get("--model", "mlp,cnn");
  if (models != "mlp" && models != "cnn" && models != "mlp,cnn")
    throw UsageError("--model must be mlp, cnn or mlp,cnn, got '" + models + "'");
  const DeviceInfo device = select_device_or_usage_error(args);

  check(anycl_check_version(ANYCL_API_VERSION), "anycl_check_version");
  anycl_runtime* r = nullptr;
  check(anycl_runtime_create(std::to_string(device.index).c_str(), &r), "anycl_runtime_create");
  const RuntimePtr rt(r);

  Table t;
  t.name = "predict";
  t.title = "Inference through the C API (anycl_predict) beside onnxruntime on the ONNX export, same run";
  t.columns = {"model", "engine", "batch-1 p50 ms", "batch-1 p99 ms"};
  for (size_t b : s.batches) t.columns.push_back(fmt::format("samples/s @{}", b));
  for (const ModelCase& c : kCases) {
    if (models.find(c.name) == std::string::npos) continue;
    const ModelPtr model = trained_model(rt.get(), c);
    const Figures mine = measure_anycl(model.get(), rt.get(), features(c), s);
    t.rows.push_back(row(c.title, "anycl C API", &mine, s.batches.size()));
    const OrtResult ort = measure_onnxruntime(model.get(), s);
    if (ort.engine.empty()) {
      t.rows.push_back(row(c.title, "onnxruntime: not available", nullptr, s.batches.size()));
      t.notes.push_back(fmt::format("{}: onnxruntime left out: {}", c.name, ort.why));
    } else {
      t.rows.push_back(row(c.title, ort.engine + " CPU", &ort.figures, s.batches.size()));
    }
  }
  t.notes.push_back(fmt::format(
      "batch-1: {} timed calls after {} warm-up calls, each from the call to its return (nearest-rank "
      "percentiles); throughput: median of {} repeats of at least 0.2 s",
      s.count, s.warmup, s.repeats));
  t.notes.push_back("anycl_predict returns softmax probabilities, as the ONNX export's graph does");
  if (args.has("--json"))
    print_json({t}, device, "");
  else
    print_table(t, device);
  return 0;
}

}  // namespace anycl::cli
