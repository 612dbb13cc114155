// `anycl bench cnn`: Trainer throughput of the reference CNN (or, with --model bncnn, of the BatchNorm
// CNN beside the same CNN without BatchNorm) and a per-layer breakdown beside the host. Per-layer device
// times are wall-clock around one layer's enqueue + queue finish, so they include launch latency and exclude
// overlap; the Trainer's figure is the one that counts.
#include "bench_cnn.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <functional>

#include "anycl/data/dataset.hpp"
#include "anycl/error.hpp"
#include "anycl/nn/conv2d.hpp"
#include "anycl/nn/dense.hpp"
#include "anycl/nn/maxpool2d.hpp"
#include "anycl/nn/model_from_flags.hpp"
#include "anycl/optim/optimizer.hpp"
#include "anycl/train/trainer.hpp"
#include "bench_breakdown.hpp"
#include "bench_host_blas.hpp"

namespace anycl::cli {
namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Median seconds of `repeats` calls of f after one warm-up call.
double median_seconds(int repeats, const std::function<void()>& f) {
  f();
  std::vector<double> t;
  for (int i = 0; i < repeats; ++i) {
    const auto t0 = Clock::now();
    f();
    t.push_back(since(t0));
  }
  return median(t);
}

// Host forward + backward of one layer at `batch` (im2col + OpenBLAS for Conv2D and Dense, loops for
// pooling); 0 for layers without host work (dropout, flatten). Seconds for forward and backward.
std::pair<double, double> host_layer_seconds(const Layer& layer, const Shape& in, size_t batch, int repeats) {
  std::vector<float> x(batch * shape_size(in), 0.5f);
  if (const auto* c = dynamic_cast<const Conv2D*>(&layer)) {
    const ConvGeometry g = c->geometry(in);
    const size_t k = g.patch(), p = g.plane(), f = c->filters();
    std::vector<float> w(f * k, 0.01f), col(k * p), y(batch * f * p), dw(f * k), dx(x.size());
    auto im2col = [&](size_t b) {
      for (size_t r = 0; r < k; ++r) {
        const size_t ch = r / (g.kernel * g.kernel), i = (r / g.kernel) % g.kernel, j = r % g.kernel;
        for (size_t oy = 0; oy < g.out_h; ++oy)
          for (size_t ox = 0; ox < g.out_w; ++ox) {
            const long yy = long(oy * g.stride + i) - long(g.pad_top),
                       xx = long(ox * g.stride + j) - long(g.pad_left);
            col[r * p + oy * g.out_w + ox] =
                yy < 0 || xx < 0 || yy >= long(g.height) || xx >= long(g.width)
                    ? 0.f
                    : x[((b * g.channels + ch) * g.height + size_t(yy)) * g.width + size_t(xx)];
          }
      }
    };
    const double fwd = median_seconds(repeats, [&] {
      for (size_t b = 0; b < batch; ++b) {
        im2col(b);
        host_sgemm(false, false, f, p, k, 1.f, w.data(), k, col.data(), p, 0.f, &y[b * f * p], p);
      }
    });
    const double bwd = median_seconds(repeats, [&] {
      for (size_t b = 0; b < batch; ++b) {
        im2col(b);
        host_sgemm(false, true, f, k, p, 1.f, &y[b * f * p], p, col.data(), p, b ? 1.f : 0.f, dw.data(), k);
        host_sgemm(true, false, k, p, f, 1.f, w.data(), k, &y[b * f * p], p, 0.f, col.data(), p);
        // col2im (scatter form on the host)
        for (size_t r = 0; r < k; ++r) {
          const size_t ch = r / (g.kernel * g.kernel), i = (r / g.kernel) % g.kernel, j = r % g.kernel;
          for (size_t oy = 0; oy < g.out_h; ++oy)
            for (size_t ox = 0; ox < g.out_w; ++ox) {
              const long yy = long(oy * g.stride + i) - long(g.pad_top),
                         xx = long(ox * g.stride + j) - long(g.pad_left);
              if (yy >= 0 && xx >= 0 && yy < long(g.height) && xx < long(g.width))
                dx[((b * g.channels + ch) * g.height + size_t(yy)) * g.width + size_t(xx)] +=
                    col[r * p + oy * g.out_w + ox];
            }
        }
      }
    });
    return {fwd, bwd};
  }
  if (const auto* d = dynamic_cast<const Dense*>(&layer)) {
    const size_t n = shape_size(in), u = d->units();
    std::vector<float> w(n * u, 0.01f), y(batch * u), dw(n * u), dx(batch * n);
    const double fwd = median_seconds(repeats, [&] {
      host_sgemm(false, false, batch, u, n, 1.f, x.data(), n, w.data(), u, 0.f, y.data(), u);
    });
    const double bwd = median_seconds(repeats, [&] {
      host_sgemm(true, false, n, u, batch, 1.f, x.data(), n, y.data(), u, 0.f, dw.data(), u);
      host_sgemm(false, true, batch, n, u, 1.f, y.data(), u, w.data(), u, 0.f, dx.data(), n);
    });
    return {fwd, bwd};
  }
  if (const auto* m = dynamic_cast<const MaxPool2D*>(&layer)) {
    const PoolGeometry g = m->geometry(in);
    const size_t out = g.out_h * g.out_w, hw = g.height * g.width, planes = batch * g.channels;
    std::vector<float> y(planes * out);
    std::vector<size_t> arg(planes * out);
    std::vector<float> dx(x.size());
    const double fwd = median_seconds(repeats, [&] {
      for (size_t pl = 0; pl < planes; ++pl)
        for (size_t o = 0; o < out; ++o) {
          const size_t oy = o / g.out_w, ox = o % g.out_w;
          size_t best = oy * g.stride * g.width + ox * g.stride;
          for (size_t a = 0; a < g.size; ++a)
            for (size_t c = 0; c < g.size; ++c) {
              const size_t at = (oy * g.stride + a) * g.width + ox * g.stride + c;
              if (x[pl * hw + at] > x[pl * hw + best]) best = at;
            }
          y[pl * out + o] = x[pl * hw + best], arg[pl * out + o] = best;
        }
    });
    const double bwd = median_seconds(repeats, [&] {
      std::fill(dx.begin(), dx.end(), 0.f);
      for (size_t i = 0; i < y.size(); ++i) dx[(i / out) * hw + arg[i]] += y[i];
    });
    return {fwd, bwd};
  }
  return {0, 0};
}

// The BatchNorm CNN's layers without its normalisation: each convolution with its own ReLU where the
// BatchNorm CNN has Conv2D (linear) → BatchNormalization → ReLU; what BatchNorm's step cost is against.
constexpr const char* kWithoutBatchNorm = "conv32x3,conv64x3,pool2,conv64x3,globalavgpool";

ModelSpec spec_of_layers(const char* layers, const Shape& image, size_t classes) {
  ModelFlags flags;
  flags.layers = layers;
  flags.dropout = 0;
  return model_from_flags(flags, image, classes);
}

// A Conv2D algorithm as the tables name it.
std::string algorithm_name(ConvForward algo) {
  switch (algo) {
    case ConvForward::convgemm:
      return "CLBlast Convgemm";
    case ConvForward::direct:
      return "direct kernels for a short patch";
    case ConvForward::winograd:
      return "Winograd F(4×4,3×3) for 3×3 at stride 1";
    case ConvForward::automatic:
      return "the default (direct for a short patch, Winograd for 3×3, on a CPU)";
    default:
      return "im2col + one GEMM";
  }
}

// Median training samples/s of `spec` with Adam over `repeats` epochs after a warm-up epoch, the
// convolutions forward by `algo`; the timed steps' command breakdown appended to `breakdown` if given.
double training_rate(Runtime& rt, const ModelSpec& spec, ConvForward algo, const data::DataSplits& splits,
                     int repeats, std::vector<Table>* breakdown, const std::string& trace_path) {
  const size_t batch = 128, count = splits.train.count;
  Sequential model(spec);
  for (const auto& l : model.layers())
    if (auto* c = dynamic_cast<Conv2D*>(l.get())) c->set_forward(algo);
  auto optimizer = make_optimizer(rt, model.parameter_count(), {"adam"});
  model.build(rt, batch);
  model.initialize(1);
  const DeviceDataset train(rt, splits.train);
  TrainOptions opts;
  opts.epochs = size_t(1 + repeats);
  opts.batch = batch;
  Trainer trainer(model, *optimizer, opts);
  std::vector<double> sps;
  trainer.on_epoch_end = [&](const EpochStats& e) {
    if (e.epoch > 1) sps.push_back(e.samples_per_second);
  };
  trainer.fit(train);
  if (breakdown)  // the steps after the warm-up epoch
    breakdown->push_back(step_breakdown_table(rt, int64_t((count + batch - 1) / batch), trace_path));
  return median(sps);
}

}  // namespace

Table bench_cnn(Runtime& rt, const std::string& data_dir, size_t limit, int repeats,
                const std::vector<ConvForward>& forwards, std::vector<Table>* breakdown,
                const std::string& trace_path, const std::string& which) {
  if (which != "cnn" && which != "bncnn")
    throw ValidationError("bench cnn: the model must be cnn or bncnn, got '" + which + "'");
  const bool batchnorm = which == "bncnn";
  Table t;
  t.name = "cnn";
  t.title =
      batchnorm
          ? "BatchNorm CNN (conv32 3×3 → BN → relu, conv64 3×3 → BN → relu, pool 2, conv64 3×3 → "
            "BN → relu, global average pool; Adam, batch 128) beside the same CNN without BatchNorm"
          : "Reference CNN (Keras mnist_cnn: conv32 3×3, conv64 3×3, pool 2, dense 128; Adam, batch 128)";
  t.columns = {"layer / where", "output", "fwd ms", "bwd ms", "host fwd ms", "host bwd ms"};
  data::LoadOptions load;
  load.limit = limit;
  const data::DataSplits splits = data::load_folder(data_dir, load);
  const size_t batch = 128, count = splits.train.count;
  const Shape image{1, splits.train.rows, splits.train.cols};
  const size_t classes = splits.train.num_classes;
  const ModelSpec spec =
      batchnorm ? spec_of_layers(kBatchNormCnnLayers, image, classes) : reference_cnn(image, classes);

  // 1. The real Trainer: each Conv2D forward algorithm in turn, or the BatchNorm CNN and the same CNN
  // without BatchNorm (the im2col forward alone).
  std::vector<std::pair<std::string, double>> rates;
  if (forwards.empty()) throw ValidationError("bench cnn: no Conv2D algorithm to train");
  std::vector<ConvForward> algorithms = forwards;
  if (batchnorm) algorithms.resize(1);
  for (size_t i = 0; i < algorithms.size(); ++i)
    rates.emplace_back(
        batchnorm ? "BatchNorm CNN" : algorithm_name(algorithms[i]),
        training_rate(rt, spec, algorithms[i], splits, repeats, i == 0 ? breakdown : nullptr, trace_path));
  if (batchnorm)
    rates.emplace_back("the same CNN without BatchNorm",
                       training_rate(rt, spec_of_layers(kWithoutBatchNorm, image, classes), algorithms[0],
                                     splits, repeats, nullptr, {}));
  for (const auto& [name, sps] : rates)
    t.rows.push_back(
        {Cell::str(batchnorm ? "device training, " + name : "device training, convolutions by " + name),
         Cell::str(fmt::format("{:.0f} samples/s", sps)), Cell::none(), Cell::none(), Cell::none(),
         Cell::str(fmt::format("epoch {:.0f} s", 60000.0 / sps))});
  if (batchnorm)
    t.rows.push_back({Cell::str("BatchNorm's step cost (samples/s without ÷ with)"),
                      Cell::str(fmt::format("{:.2f}x", rates[1].second / rates[0].second)), Cell::none(),
                      Cell::none(), Cell::none(), Cell::none()});

  // 2. Per layer at batch 128: forward and backward each enqueued alone, then a queue finish.
  Sequential model(spec);
  model.build(rt, batch);
  model.initialize(1);
  const std::vector<float> x_host = splits.train.normalized(0, std::min(batch, count));
  std::vector<float> x_full(batch * shape_size(image), 0.f);
  std::copy(x_host.begin(), x_host.end(), x_full.begin());
  const Tensor x = Tensor::from_host(rt, {batch, shape_size(image)}, x_full);
  StepContext ctx;
  ctx.training = true;
  Shape in = image;
  std::vector<Tensor> inputs{x};
  double dev_total = 0, host_total = 0;
  const auto& layers = model.layers();
  std::vector<double> fwd(layers.size()), bwd(layers.size());
  for (size_t i = 0; i < layers.size(); ++i) {
    Tensor out;
    fwd[i] = median_seconds(repeats, [&] {
      out = layers[i]->forward(inputs.back(), ctx);
      rt.finish();
    });
    inputs.push_back(out);
  }
  for (size_t i = layers.size(); i-- > 0;) {
    Tensor dy(rt, inputs[i + 1].shape());
    std::vector<double> times;
    for (int r = 0; r <= repeats; ++r) {
      dy.fill(0.001f);  // backward may overwrite its dy
      rt.finish();
      const auto t0 = Clock::now();
      layers[i]->backward(dy, ctx, i > 0);
      rt.finish();
      if (r > 0) times.push_back(since(t0));
    }
    bwd[i] = median(times);
  }
  for (size_t i = 0; i < layers.size(); ++i) {
    const Shape out = layers[i]->output_shape(in);
    const auto [hf, hb] = host_layer_seconds(*layers[i], in, batch, std::max(1, repeats / 2));
    std::string row = layers[i]->kind();
    if (auto* c = dynamic_cast<Conv2D*>(layers[i].get()))
      row += fmt::format(" {} {}×{}", c->filters(), c->kernel(), c->kernel());
    t.rows.push_back({Cell::str(row), Cell::str(shape_string(out)), Cell::num(fwd[i] * 1e3, 2),
                      Cell::num(bwd[i] * 1e3, 2), Cell::num(hf * 1e3, 2), Cell::num(hb * 1e3, 2)});
    dev_total += fwd[i] + bwd[i];
    host_total += hf + hb;
    // Each algorithm's forward pass, for each convolution at this shape.
    if (auto* c = dynamic_cast<Conv2D*>(layers[i].get())) {
      for (ConvForward algo : algorithms) {
        c->set_forward(algo);
        const double s = median_seconds(repeats, [&] {
          c->forward(inputs[i], ctx);
          rt.finish();
        });
        t.rows.push_back({Cell::str("  forward by " + algorithm_name(algo)), Cell::none(),
                          Cell::num(s * 1e3, 2), Cell::none(), Cell::none(), Cell::none()});
      }
    }
    in = out;
  }
  t.rows.push_back({Cell::str("sum of layers (one step, excluding loss and optimizer)"), Cell::none(),
                    Cell::num(dev_total * 1e3, 1), Cell::none(), Cell::num(host_total * 1e3, 1),
                    Cell::none()});
  t.notes.push_back(
      fmt::format("training: {} samples per timed epoch, median of {} epochs after one warm-up epoch; "
                  "epoch s = 60000 / samples/s",
                  count, repeats));
  t.notes.push_back(
      "per layer: wall-clock of one layer's forward (or backward) enqueued alone followed by a queue "
      "finish (median of the repeats) — includes launch latency, no OpenCL event profiling");
  t.notes.push_back(std::string("host: im2col + ") + (host_blas_available() ? "OpenBLAS" : "plain-loop") +
                    " SGEMM per sample, loops for max pooling (dropout, flatten, batch normalization and "
                    "global pooling: no host work counted)");
  return t;
}

}  // namespace anycl::cli
