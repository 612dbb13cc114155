// A small CNN end to end on synthetic 8×8 images: the device's Trainer follows the host reference
// (tests/reference/mlp.hpp over the image layers) step by step, reruns are bit-identical, two
// data-parallel replicas follow one device; the reference CNN's summary and parameter count; the
// layer list's shape errors; model files of image models round-trip as version 3.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <anycl/data/dataset.hpp>
#include <anycl/error.hpp>
#include <anycl/nn/model_from_flags.hpp>
#include <anycl/train/batch_order.hpp>
#include <anycl/train/model_file.hpp>
#include <anycl/train/trainer.hpp>

#include <cmath>
#include <random>

#include "helpers.hpp"
#include "reference/gather.hpp"
#include "reference/mlp.hpp"

namespace {

constexpr size_t kSamples = 24, kSide = 8, kSteps = 8;
constexpr uint64_t kSeed = 77;

constexpr const char* kSmallCnn = "conv4x3,pool2,dropout0.25,conv6x2same,flatten,16";

anycl::ModelSpec small_cnn(const char* layers = kSmallCnn) {
  anycl::ModelFlags flags;
  flags.layers = layers;
  flags.dropout = 0.f;
  return anycl::model_from_flags(flags, anycl::Shape{1, kSide, kSide}, 10);
}

const anycl::data::Dataset& images() {
  static const anycl::data::Dataset data = [] {
    anycl::data::Dataset d;
    d.count = kSamples, d.rows = kSide, d.cols = kSide, d.num_classes = 10;
    std::mt19937 gen(5);
    for (size_t i = 0; i < kSamples * kSide * kSide; ++i) d.pixels.push_back(uint8_t(gen() % 256));
    for (size_t i = 0; i < kSamples; ++i) d.labels.push_back(uint8_t(i % 10));
    return d;
  }();
  return data;
}

anycl::TrainOptions options() {
  anycl::TrainOptions o;
  o.epochs = kSteps;  // one step per epoch
  o.batch = kSamples;
  o.seed = kSeed;
  return o;
}

std::vector<double> device_losses(std::vector<float>* params, const char* layers = kSmallCnn) {
  auto& rt = anycl::test::runtime();
  anycl::Sequential model(small_cnn(layers));
  model.build(rt, kSamples);
  model.initialize(kSeed);
  auto opt = anycl::make_optimizer(rt, model.parameter_count(), {"adam"});
  anycl::Trainer trainer(model, *opt, options());
  const anycl::DeviceDataset train(rt, images());
  std::vector<double> losses;
  for (const auto& e : trainer.fit(train)) losses.push_back(e.train_loss);
  if (params) *params = model.parameters().download();
  return losses;
}

}  // namespace

TEST_CASE("a small CNN follows the host reference step by step and reruns bit-identically") {
  // And the same with Keras' leaky_relu, elu and gelu (whose layers keep z for the backward), and with
  // average and global pooling.
  for (const char* layers :
       {kSmallCnn,
        "conv4x3:gelu,pool2,dropout0.25,conv6x2same:elu,flatten,16:leaky_relu,"
        "12:gelu",
        "conv4x3,avgpool2,conv6x2same:gelu,globalavgpool,16", "conv4x3:elu,pool2,globalmaxpool,12"}) {
    CAPTURE(layers);
    std::vector<float> pa, pb;
    const auto a = device_losses(&pa, layers), b = device_losses(&pb, layers);
    CHECK(a == b);
    CHECK(pa == pb);
    anycl::reference::Mlp host(small_cnn(layers), kSeed);
    anycl::OptimizerConfig config{"adam"};
    anycl::reference::Optimizer opt(config, host.parameters().size());
    const size_t features = kSide * kSide;
    std::vector<float> x(kSamples * features);
    std::vector<int> y(kSamples);
    REQUIRE(a.size() == kSteps);
    for (uint32_t step = 0; step < kSteps; ++step) {
      const auto order = anycl::epoch_order(kSamples, kSeed, step);
      anycl::reference::gather_batch(images().pixels.data(), images().labels.data(), order.data(), 0,
                                     kSamples, features, x.data(), y.data());
      const double ref = host.train_step(x, y, kSamples, kSeed, step, opt) / double(kSamples);
      CHECK_MESSAGE(std::abs(a[step] - ref) <= 1e-3 * std::abs(ref) + 1e-5,
                    fmt::format("step {}: device {} vs reference {}", step, a[step], ref));
    }
    CHECK(a.back() < a.front());
  }
}

TEST_CASE("two data-parallel replicas train a CNN as one device does") {
  const auto ref = device_losses(nullptr);
  anycl::Runtime r0, r1;
  anycl::Trainer dp({&r0, &r1}, small_cnn(), {"adam"}, options());
  std::vector<double> losses;
  for (const auto& e : dp.fit(images())) losses.push_back(e.train_loss);
  REQUIRE(losses.size() == ref.size());
  for (size_t s = 0; s < ref.size(); ++s)
    CHECK_MESSAGE(std::abs(losses[s] - ref[s]) <= 1e-3 * std::abs(ref[s]),
                  fmt::format("step {}: data-parallel {} vs single device {}", s, losses[s], ref[s]));
  CHECK(dp.replica(0).model().parameters().download() == dp.replica(1).model().parameters().download());
}

TEST_CASE("the reference CNN is Keras' mnist_cnn - summary shapes and parameter counts") {
  const anycl::Sequential cnn(anycl::reference_cnn());
  CHECK(cnn.parameter_count() == 1199882);  // Keras: 320 + 18,496 + 1,179,776 + 1,290
  const std::string s = cnn.summary();
  CHECK(s.find("conv2d (Conv2D, relu)") != std::string::npos);
  CHECK(s.find("(None, 32, 26, 26)") != std::string::npos);
  CHECK(s.find("(None, 64, 12, 12)") != std::string::npos);
  CHECK(s.find("(None, 9216)") != std::string::npos);
  CHECK(s.find("18,496") != std::string::npos);
  CHECK(cnn.spec().input_shape == anycl::Shape{1, 28, 28});
}

TEST_CASE("the BatchNorm CNN (--model bncnn) - summary shapes and parameter counts") {
  anycl::ModelFlags flags;
  flags.layers = anycl::kBatchNormCnnLayers;
  flags.dropout = 0.f;
  const anycl::Sequential cnn(anycl::model_from_flags(flags, anycl::Shape{1, 28, 28}, 10));
  // trained: 320 + 2·32 + 18,496 + 2·64 + 36,928 + 2·64 + 650; the summary's non-trainable 320 are
  // the moving statistics (Keras: 57,034 in all)
  CHECK(cnn.parameter_count() == 56714);
  const std::string s = cnn.summary();
  CHECK(s.find("(None, 64, 12, 12)") != std::string::npos);
  CHECK(s.find("(None, 64, 10, 10)") != std::string::npos);
  CHECK(s.find("GlobalAveragePooling2D") != std::string::npos);
  CHECK(s.find("Non-trainable params: 320") != std::string::npos);
}

TEST_CASE("--layers lists that do not fit the image are refused with the reason") {
  anycl::ModelFlags flags;
  flags.dropout = 0.f;
  const anycl::Shape image{1, 28, 28};
  CHECK(anycl::model_from_flags(flags, image, 10).input_shape.empty());  // an MLP stays flat
  for (const auto& bad :
       std::vector<std::pair<std::string, std::string>>{{"pool2,pool2,pool2,pool2,pool2", "less than 1×1"},
                                                        {"conv8x3,flatten,conv8x3", "needs image inputs"},
                                                        {"conv8x30", "smaller than the kernel"},
                                                        {"conv8", "convolution token"},
                                                        {"pool0", "pooling token"},
                                                        {"conv8x3s0", "convolution token"}}) {
    CAPTURE(bad.first);
    flags.layers = bad.first;
    CHECK_THROWS_WITH_AS(anycl::model_from_flags(flags, image, 10), doctest::Contains(bad.second.c_str()),
                         anycl::ValidationError);
    CHECK_THROWS_WITH_AS(anycl::model_from_flags(flags, image, 10), doctest::Contains("--layers"),
                         anycl::ValidationError);
  }
  flags.layers = "conv4x3,conv4x3s2same,pool3s2,flatten";
  const auto spec = anycl::model_from_flags(flags, image, 10);
  CHECK(spec.layers.at(1) == anycl::LayerSpec{"conv2d", "4 3 2 same relu glorot_uniform"});
  CHECK(spec.layers.at(2) == anycl::LayerSpec{"maxpool2d", "3 2"});
}

TEST_CASE(
    "an image model's file is version 3 with an input_shape line and round-trips - MLP files stay version "
    "1") {
  const anycl::ModelSpec spec = small_cnn();
  const anycl::Sequential model(spec);
  const std::vector<float> params(model.parameter_count(), 0.25f);
  const auto bytes = anycl::encode_model(spec, 10, params);
  CHECK(bytes[8] == 3);
  const std::string text(bytes.begin(), bytes.end());
  CHECK(text.find("input 64\ninput_shape 1 8 8\nclasses 10\nconv2d 4 3 1 valid relu glorot_uniform\n") !=
        std::string::npos);
  const anycl::SavedModel back = anycl::decode_model("cnn.anycl", bytes);
  CHECK(back.spec.input_shape == spec.input_shape);
  CHECK(back.spec.layers == spec.layers);
  CHECK(back.parameters == params);
  const anycl::ModelSpec mlp = anycl::reference_mlp(784, 10);
  CHECK(anycl::encode_model(mlp, 10, std::vector<float>(anycl::Sequential(mlp).parameter_count()))[8] == 1);
}

TEST_CASE("anycl train refuses --model and --layers values that do not fit the images (exit 2)") {
  anycl::test::expect_train_usage_errors({
      {"--model resnet", "--model must be mlp, cnn or bncnn"},
      {"--layers conv8x3,flatten,conv8x3", "does not fit the input (1, 28, 28)"},
      {"--layers pool2,pool2,pool2,pool2,pool2", "less than 1×1"},
      {"--layers conv8x", "convolution token"},
  });
}

TEST_CASE("a CNN run stopped at a checkpoint resumes bit-identically, and its model evaluates") {
  anycl::test::TempDir dir;
  const std::string cli = anycl::test::anycl_cli();
  const std::string flags = "--layers conv4x3,pool2,flatten,16 --dropout 0 --limit 256 --epochs 2 --quiet";
  auto r = anycl::test::run_command(
      fmt::format("{} train {} --checkpoint {} --max-steps 1", cli, flags, dir.file("ck")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  r = anycl::test::run_command(
      fmt::format("{} train --resume {} --quiet --save {}", cli, dir.file("ck"), dir.file("resumed.anycl")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  r = anycl::test::run_command(fmt::format("{} train {} --save {}", cli, flags, dir.file("straight.anycl")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(anycl::test::slurp(dir.file("resumed.anycl")) == anycl::test::slurp(dir.file("straight.anycl")));
  r = anycl::test::run_command(fmt::format("{} eval --model {}", cli, dir.file("resumed.anycl")));
  CHECK_MESSAGE(r.exit_code == 0, r.output);
  CHECK_MESSAGE(r.output.find("confusion") != std::string::npos, r.output);
}

TEST_CASE("anycl bench cnn --breakdown names each convolution's commands and writes the trace") {
  anycl::test::TempDir dir;
  const std::string trace = dir.file("cnn-trace.json");
  const auto r = anycl::test::run_command(fmt::format(
      "{} bench cnn --limit 128 --repeats 1 --breakdown --profile {}", anycl::test::anycl_cli(), trace));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  // Conv 1's patch (9) runs as direct kernels on a CPU (ConvForward::automatic), as GEMMs elsewhere;
  // conv 2's forward pass as Winograd's on a CPU (36 GEMMs of 64 filters by 32 channels), im2col's
  // elsewhere, and its dx as Winograd's on a CPU, col2im's elsewhere.
  const bool cpu = anycl::test::runtime().info().type == anycl::DeviceType::cpu;
  for (const char* command :
       {cpu ? "layer 1 conv2d forward: conv_direct_forward_" : "layer 1 conv2d forward: im2col_",
        cpu ? "layer 1 conv2d backward: conv_direct_weight_grad" : "layer 1 conv2d backward: SGEMM",
        cpu ? "layer 2 conv2d forward: winograd_input" : "layer 2 conv2d forward: im2col_",
        cpu ? "layer 2 conv2d forward: SGEMM TN 64x" : "layer 2 conv2d forward: SGEMM NN 64x73728x288",
        cpu ? "layer 2 conv2d forward: winograd_output_" : "conv_output_forward",
        "layer 2 conv2d backward: conv_output_backward", "layer 2 conv2d backward: SGEMM batched TN ",
        cpu ? "layer 2 conv2d backward: winograd_output_rows_linear" : "layer 2 conv2d backward: col2im_",
        // the pool's backward in conv 2's output stage on a CPU (conv_pool.cl), its own kernel elsewhere
        cpu ? "layer 2 conv2d backward: conv_output_backward_pooled_relu"
            : "maxpool2d backward: maxpool_backward",
        "non-GEMM share"})
    CHECK_MESSAGE(r.output.find(command) != std::string::npos, command, "\n", r.output);
  const std::string json = anycl::test::slurp(trace);
  CHECK(json.find("\"traceEvents\"") != std::string::npos);
  CHECK(json.find("conv_output_backward") != std::string::npos);
}

TEST_CASE("anycl bench cnn --model bncnn trains the BatchNorm CNN beside the same CNN without it") {
  const auto r = anycl::test::run_command(fmt::format(
      "{} bench cnn --model bncnn --limit 128 --repeats 1 --breakdown", anycl::test::anycl_cli()));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  // The pool's passes in the BatchNormalization's before it on the row forms' drivers (PoCL's CPU driver:
  // batchnorm.cl's *_pooled kernels), its own kernels elsewhere.
  const bool rows = anycl::test::runtime().row_kernels();
  for (const char* row : {"device training, BatchNorm CNN", "device training, the same CNN without BatchNorm",
                          "BatchNorm's step cost (samples/s without ÷ with)", "BatchNormalization",
                          rows ? "layer 4 batchnorm backward: batchnorm_backward_sums_pooled"
                               : "layer 5 maxpool2d backward: maxpool_backward",
                          rows ? "layer 4 batchnorm forward: batchnorm_forward_rows_pooled"
                               : "layer 5 maxpool2d forward: maxpool_forward"})
    CHECK_MESSAGE(r.output.find(row) != std::string::npos, row, "\n", r.output);
  if (rows) CHECK_MESSAGE(r.output.find("maxpool_") == std::string::npos, r.output);
  const auto bad =
      anycl::test::run_command(fmt::format("{} bench cnn --model mlp --limit 128", anycl::test::anycl_cli()));
  CHECK(bad.exit_code != 0);
  CHECK_MESSAGE(bad.output.find("--model must be cnn or bncnn") != std::string::npos, bad.output);
}

TEST_CASE("anycl bench cnn --conv-forward refuses an unknown algorithm with the names it takes") {
  for (const char* list : {"nope", "default,nope", ","}) {
    const auto r = anycl::test::run_command(
        fmt::format("{} bench cnn --conv-forward '{}'", anycl::test::anycl_cli(), list));
    CHECK_MESSAGE(r.exit_code == 2, list, ": ", r.output);
    CHECK_MESSAGE(r.output.find("default, gemm, direct") != std::string::npos, list, ": ", r.output);
  }
}
