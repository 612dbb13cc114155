// Model files: save → load gives identical predictions; every kind of damaged file is refused
// with a message naming the fault.
#include <doctest/doctest.h>
#include <anycl/error.hpp>
#include <anycl/train/model_file.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "hash.hpp"
#include "helpers.hpp"

namespace {

std::unique_ptr<anycl::Sequential> small_model(anycl::Runtime& rt) {
  auto model = std::make_unique<anycl::Sequential>(12);
  model->dense(9, anycl::Activation::tanh)
      .dropout(0.3f)
      .dense(4, anycl::Activation::relu, anycl::Init::he_uniform)
      .dense(3);
  model->build(rt, 16);
  model->initialize(77);
  return model;
}

std::vector<float> logits(anycl::Sequential& model, const std::vector<float>& x, size_t rows) {
  auto tx = anycl::Tensor::from_host(model.runtime(), {rows, model.input_features()}, x);
  return model.forward(tx, anycl::StepContext{}).download();
}

std::vector<unsigned char> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_bytes(const std::string& path, const std::vector<unsigned char>& bytes) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), long(bytes.size()));
}

}  // namespace

TEST_CASE("save then load reproduces the architecture - weights and predictions exactly") {
  auto& rt = anycl::test::runtime();
  auto model = small_model(rt);
  anycl::test::TempDir dir;
  const std::string path = dir.file("m.anycl");
  anycl::save_model(path, *model, 3);
  const auto saved = anycl::read_model(path);
  CHECK(saved.num_classes == 3);
  CHECK(saved.spec.input_features == 12);
  REQUIRE(saved.spec.layers.size() == 4);
  CHECK(saved.spec.layers[0].text() == "dense 9 tanh glorot_uniform");
  CHECK(saved.spec.layers[1].text() == "dropout 0.3");
  CHECK(saved.spec.layers[2].text() == "dense 4 relu he_uniform");
  CHECK(saved.spec.loss == "softmax_cross_entropy");
  CHECK(saved.parameters == model->parameters().download());

  auto loaded = anycl::instantiate(saved, rt, 16);
  const auto x = anycl::test::random_floats(5 * 12, 0.f, 1.f, 5);
  CHECK(logits(*loaded, x, 5) == logits(*model, x, 5));
  CHECK(std::filesystem::directory_iterator(dir.path()) != std::filesystem::directory_iterator());
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) (void)e, ++files;
  CHECK(files == 1);  // no temporary left behind
}

TEST_CASE("damaged model files are refused with a clear message") {
  auto& rt = anycl::test::runtime();
  auto model = small_model(rt);
  anycl::test::TempDir dir;
  const std::string good = dir.file("good.anycl"), bad = dir.file("bad.anycl");
  anycl::save_model(good, *model, 3);
  const auto bytes = read_bytes(good);
  auto expect = [&](const std::vector<unsigned char>& content, const std::string& words) {
    write_bytes(bad, content);
    CAPTURE(words);
    CHECK_THROWS_WITH_AS(anycl::read_model(bad), doctest::Contains(words.c_str()), anycl::DataError);
  };
  SUBCASE("another format") { expect({'P', 'K', 3, 4, 0, 0, 0, 0, 0, 0, 0, 0}, "not an anycl model file"); }
  SUBCASE("empty") { expect({}, "not an anycl model file"); }
  SUBCASE("truncated") {
    for (size_t keep : {size_t(10), size_t(14), size_t(40), bytes.size() / 2, bytes.size() - 1})
      expect(std::vector<unsigned char>(bytes.begin(), bytes.begin() + long(keep)), "truncated");
  }
  SUBCASE("flipped weight bit") {
    auto copy = bytes;
    copy[copy.size() / 2] ^= 0x10;
    expect(copy, "checksum");
  }
  SUBCASE("newer version") {  // intact (checksum recomputed): a file from a newer anycl
    auto copy = bytes;
    copy[8] = uint8_t(anycl::kModelFormatVersion + 1);
    const uint64_t sum = anycl::detail::fnv1a(copy.data(), copy.size() - 8);
    for (size_t i = 0; i < 8; ++i) copy[copy.size() - 8 + i] = uint8_t(sum >> (8 * i));
    expect(copy, "upgrade anycl");
  }
  SUBCASE("flipped version byte") {  // not intact: corruption, not a newer file
    auto copy = bytes;
    copy[8] = uint8_t(anycl::kModelFormatVersion + 1);
    expect(copy, "checksum");
  }
  SUBCASE("trailing bytes") {
    auto copy = bytes;
    copy.push_back(0);
    expect(copy, "unexpected bytes");
  }
  CHECK_THROWS_WITH_AS(anycl::read_model(dir.file("missing.anycl")), doctest::Contains("missing.anycl"),
                       anycl::DataError);
}

namespace {

// A model file as version 1 lays it out, written here byte by byte (not by encode_model), so the
// format that earlier releases wrote stays readable whatever the writer does.
std::vector<unsigned char> version1_file(const std::string& arch, const std::vector<float>& weights) {
  std::vector<unsigned char> out{'A', 'N', 'Y', 'C', 'L', 'M', 'D', 'L'};
  auto put = [&](uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out.push_back((unsigned char)(v >> (8 * i)));
  };
  put(1, 4);
  put(arch.size(), 4);
  out.insert(out.end(), arch.begin(), arch.end());
  put(weights.size(), 8);
  for (float f : weights) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    put(bits, 4);
  }
  uint64_t h = 1469598103934665603ull;  // FNV-1a 64
  for (unsigned char c : out) h = (h ^ c) * 1099511628211ull;
  put(h, 8);
  return out;
}

}  // namespace

TEST_CASE("a version 1 model file loads and is written back byte for byte") {
  const std::string arch =
      "input 3\nclasses 2\ndense 2 relu he_uniform\ndropout 0.25\ndense 2 linear glorot_uniform\n";
  const auto weights = anycl::test::random_floats(3 * 2 + 2 + 2 * 2 + 2, -1.f, 1.f, 9);
  const auto bytes = version1_file(arch, weights);
  const auto saved = anycl::decode_model("v1.anycl", bytes);
  CHECK(saved.spec.loss == "softmax_cross_entropy");
  CHECK(saved.num_classes == 2);
  CHECK(saved.parameters == weights);
  CHECK(anycl::encode_model(saved.spec, saved.num_classes, saved.parameters) == bytes);
}

TEST_CASE("a regression model stores its loss as format version 2 and loads with it") {
  anycl::ModelSpec spec;
  spec.input_features = 4;
  spec.layers = {{"dense", "3 tanh glorot_uniform"}, {"dense", "2 linear glorot_uniform"}};
  spec.loss = "mse";
  const auto weights = anycl::test::random_floats(4 * 3 + 3 + 3 * 2 + 2, -1.f, 1.f, 10);
  const auto bytes = anycl::encode_model(spec, 2, weights);
  CHECK(bytes[8] == 2);
  const auto saved = anycl::decode_model("mse.anycl", bytes);
  CHECK(saved.spec.loss == "mse");
  CHECK(saved.spec.layers == spec.layers);
  CHECK(saved.parameters == weights);
  CHECK(anycl::Sequential(saved.spec).loss() == "mse");
}

TEST_CASE("model file sizes that overflow are refused instead of wrapping") {
  // input 2^60 × dense 16 = 2^64 weights (+16 biases) wraps to 16 in 64-bit arithmetic.
  anycl::ModelSpec spec;
  spec.input_features = size_t(1) << 60;
  spec.layers = {{"dense", "16 linear glorot_uniform"}};
  const auto bytes = anycl::encode_model(spec, 16, std::vector<float>(16, 0.5f));
  CHECK_THROWS_WITH_AS(anycl::decode_model("huge.anycl", bytes),
                       doctest::Contains("'huge.anycl' has an impossible architecture"), anycl::DataError);
  CHECK_THROWS_AS(anycl::Sequential(spec).parameter_count(), anycl::ValidationError);
}

TEST_CASE("model files holding NaN or infinite weights are refused") {
  anycl::ModelSpec spec;
  spec.input_features = 2;
  spec.layers = {{"dense", "2 linear glorot_uniform"}};
  for (float poison : {std::nanf(""), INFINITY, -INFINITY}) {
    std::vector<float> weights{0.1f, 0.2f, 0.3f, 0.4f, 0.f, 0.f};
    weights[3] = poison;
    CAPTURE(poison);
    CHECK_THROWS_WITH_AS(anycl::decode_model("diverged.anycl", anycl::encode_model(spec, 2, weights)),
                         doctest::Contains("model file 'diverged.anycl' holds a non-finite weight"),
                         anycl::DataError);
  }
}
