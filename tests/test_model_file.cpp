// Model files: save → load gives identical predictions; every kind of damaged file is refused
// with a message naming the fault.
#include <doctest/doctest.h>
#include <anycl/error.hpp>
#include <anycl/train/model_file.hpp>

#include <filesystem>
#include <fstream>

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
  CHECK(saved.spec.layers[0].activation == anycl::Activation::tanh);
  CHECK(saved.spec.layers[1].rate == doctest::Approx(0.3f));
  CHECK(saved.spec.layers[2].init == anycl::Init::he_uniform);
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
  SUBCASE("newer version") {
    auto copy = bytes;
    copy[8] = 2;
    expect(copy, "upgrade anycl");
  }
  SUBCASE("trailing bytes") {
    auto copy = bytes;
    copy.push_back(0);
    expect(copy, "unexpected bytes");
  }
  CHECK_THROWS_WITH_AS(anycl::read_model(dir.file("missing.anycl")), doctest::Contains("missing.anycl"),
                       anycl::DataError);
}
