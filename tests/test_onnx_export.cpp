// ONNX export checked by real ONNX implementations: `anycl export --onnx` writes the model, the
// onnx checker validates it and onnxruntime evaluates it on test images (tests/onnx_compare.py);
// its probabilities must match anycl's within 1e-5 with the same argmax. Skipped, with a
// message, where onnxruntime is not installed (tools/setup.sh installs it into build/onnx-venv).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "anycl/data/dataset.hpp"
#include "anycl/nn/model_from_flags.hpp"
#include "anycl/train/model_file.hpp"
#include "anycl/train/prediction.hpp"
#include "helpers.hpp"

using anycl::test::anycl_cli;
using anycl::test::run_command;

namespace {

// $ANYCL_ONNX_PYTHON, else the venv tools/setup.sh makes, else python3 from PATH.
std::string onnx_python() {
  if (const char* p = std::getenv("ANYCL_ONNX_PYTHON"); p && *p) return p;
  const std::string venv = std::string(ANYCL_SOURCE_DIR) + "/build/onnx-venv/bin/python3";
  return std::filesystem::exists(venv) ? venv : "python3";
}

std::string test_images(const std::string& dir) {
  for (const char* name : {"t10k-images-idx3-ubyte.gz", "t10k-images-idx3-ubyte"})
    if (std::filesystem::exists(dir + "/" + name)) return dir + "/" + name;
  return dir + "/t10k-images-idx3-ubyte.gz";
}

// Why onnxruntime cannot run here ("" when it can).
std::string onnxruntime_missing() {
  const std::string python = onnx_python();
  if (run_command(python + " -c 'import onnxruntime, onnx, numpy'").exit_code == 0) return "";
  return "onnxruntime/onnx/numpy not importable by " + python +
         " — run tools/setup.sh (it installs them into build/onnx-venv) or set ANYCL_ONNX_PYTHON";
}

// Exports the model file `model` and compares onnxruntime's outputs with anycl's predictions.
void compare_with_onnxruntime(const std::string& model, anycl::test::TempDir& dir) {
  const std::string python = onnx_python();
  const std::string onnx = dir.file("m.onnx"), probs = dir.file("p.f32");
  auto r = run_command(fmt::format("{} export --model {} --onnx {}", anycl_cli(), model, onnx));
  if (r.exit_code == 1 && r.output.find("without ONNX export") != std::string::npos) {
    ANYCL_SKIP_TEST(Missing::installed_by_setup, r.output);
  }
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);

  // anycl's own probabilities on the test images, through the library.
  const std::string data_dir = anycl::data::default_data_dir();
  anycl::data::LoadOptions load;
  load.limit = 1;
  const auto splits = anycl::data::load_folder(data_dir, load);
  const size_t count = std::min<size_t>(splits.test.count, 2000);
  auto& rt = anycl::test::runtime();
  auto net = anycl::instantiate(anycl::read_model(model), rt, 250);
  // predict(): softmax rows for a classifier, each output's sigmoid for binary cross-entropy.
  const std::vector<float> p = anycl::predict(*net, splits.test.normalized(0, count));
  std::ofstream(probs, std::ios::binary)
      .write(reinterpret_cast<const char*>(p.data()), std::streamsize(p.size() * sizeof(float)));

  r = run_command(fmt::format("{} {}/tests/onnx_compare.py {} {} {} {}", python, ANYCL_SOURCE_DIR, onnx,
                              test_images(data_dir), probs, count));
  MESSAGE(r.output);
  CHECK_MESSAGE(r.exit_code == 0, r.output);
}

void check_round_trip(const std::string& train_flags) {
  const std::string missing = onnxruntime_missing();
  if (!missing.empty()) ANYCL_SKIP_TEST(Missing::installed_by_setup, missing);
  anycl::test::TempDir dir;
  const std::string model = dir.file("m.anycl");
  auto r = run_command(
      fmt::format("{} train --limit 600 --epochs 1 --quiet {} --save {}", anycl_cli(), train_flags, model));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  compare_with_onnxruntime(model, dir);
}

}  // namespace

TEST_CASE("ONNX export of a ReLU MLP with dropout matches onnxruntime") {
  check_round_trip("--layers 64,32 --dropout 0.2");
}

TEST_CASE("ONNX export of tanh and sigmoid MLPs matches onnxruntime") {
  check_round_trip("--layers 32 --activation tanh --dropout 0");
  check_round_trip("--layers 24,12 --activation sigmoid");
}

TEST_CASE(
    "ONNX export of gelu, leaky_relu and elu layers (Erf subgraph, LeakyRelu alpha 0.2, Elu) matches "
    "onnxruntime") {
  check_round_trip("--layers 32:gelu,24:leaky_relu,16:elu --dropout 0");
  check_round_trip("--layers conv4x3:gelu,conv3x3s2same:elu,pool2,flatten,16:leaky_relu --dropout 0");
}

TEST_CASE(
    "ONNX export of average and global pooling (AveragePool, GlobalAveragePool, GlobalMaxPool) matches "
    "onnxruntime") {
  check_round_trip("--layers conv4x3,avgpool2,conv6x3same,globalavgpool,16 --dropout 0");
  check_round_trip("--layers conv4x3,avgpool3s2,globalmaxpool,8 --dropout 0");
}

TEST_CASE("anycl export usage errors") {
  CHECK(run_command(anycl_cli() + " export --onnx x.onnx").exit_code == 2);
  CHECK(run_command(anycl_cli() + " export --model x.anycl").exit_code == 2);
  const auto r = run_command(anycl_cli() + " export --model /nonexistent.anycl --onnx /tmp/x.onnx");
  CHECK(r.exit_code == 1);
}

TEST_CASE("ONNX export of a binary cross-entropy model ends in Sigmoid and matches onnxruntime") {
  // Multi-label over 10 outputs (the library trains it on float targets; its predictions are each
  // output's sigmoid, which onnxruntime must give too). Initialised weights suffice for the graph.
  const std::string missing = onnxruntime_missing();
  if (!missing.empty()) ANYCL_SKIP_TEST(Missing::installed_by_setup, missing);
  anycl::test::TempDir dir;
  anycl::ModelFlags flags;
  flags.layers = "16";
  flags.dropout = 0;
  anycl::ModelSpec spec = anycl::model_from_flags(flags, 784, 10);
  spec.loss = "binary_crossentropy";
  auto& rt = anycl::test::runtime();
  anycl::Sequential model(spec);
  model.build(rt, 32);
  model.initialize(7);
  anycl::save_model(dir.file("bce.anycl"), model, 0);
  compare_with_onnxruntime(dir.file("bce.anycl"), dir);
}

TEST_CASE("ONNX export of BatchNormalization after Conv2D and Dense matches onnxruntime") {
  check_round_trip("--layers conv4x3,bn,pool2,flatten,16,bn0.9 --dropout 0 --optimizer adam");
}

TEST_CASE("ONNX export of Conv2D then BatchNormalization with its own activation matches onnxruntime") {
  // Keras' block Conv2D (linear) -> BatchNormalization -> ReLU: BatchNormalization then Relu nodes.
  check_round_trip(
      "--layers conv4x3:linear,bn0.9:relu,pool2,flatten,16:linear,bn:elu --dropout 0 --optimizer adam");
}

TEST_CASE("ONNX export of a small CNN (Reshape, Conv, MaxPool, Flatten) matches onnxruntime") {
  check_round_trip(
      "--layers conv4x3,conv3x3s2same,pool2,dropout0.25,flatten,16 --dropout 0 --optimizer adam");
}
