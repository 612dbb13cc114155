// The layer registry: every type has a host reference and round-trips its text; `--layers` tokens,
// model_from_flags and reference_mlp build the same models the CLI always built.
#include <doctest/doctest.h>
#include <anycl/blas/tuning.hpp>
#include <anycl/error.hpp>
#include <anycl/nn/model_from_flags.hpp>
#include <anycl/nn/registry.hpp>
#include <anycl/nn/sequential.hpp>

#include <tuple>

#include "reference/layers.hpp"

TEST_CASE("every registered layer type has a host reference and round-trips its model-file text") {
  const std::vector<anycl::LayerSpec> examples{{"dense", "7 sigmoid he_uniform"},
                                               {"dropout", "0.25"},
                                               {"conv2d", "16 5 2 same tanh he_uniform"},
                                               {"maxpool2d", "3 2"},
                                               {"flatten", ""},
                                               {"batchnorm", "0.9 1e-05"},
                                               {"avgpool2d", "3 2"},
                                               {"globalavgpool2d", ""},
                                               {"globalmaxpool2d", ""}};
  REQUIRE(examples.size() == anycl::layer_types().size());
  for (const anycl::LayerType* t : anycl::layer_types()) {
    CAPTURE(t->name);
    CHECK(anycl::reference::host_layers().count(t->name) == 1);
    CHECK(&anycl::layer_type(t->name) == t);
  }
  CHECK(anycl::reference::host_layers().size() == anycl::layer_types().size());
  for (const auto& spec : examples) {
    const auto layer = anycl::make_layer(spec);
    CHECK(layer->spec() == spec);
    CHECK(std::string(layer->type().name) == spec.type);
  }
  CHECK_THROWS_WITH_AS(anycl::make_layer({"conv", "3"}), doctest::Contains("known: dense, dropout"),
                       anycl::ValidationError);
  CHECK_THROWS_AS(anycl::make_layer({"dense", "0 relu glorot_uniform"}), anycl::ValidationError);
  CHECK_THROWS_AS(anycl::make_layer({"dense", "4 relu glorot_uniform extra"}), anycl::ValidationError);
  CHECK_THROWS_AS(anycl::make_layer({"dropout", "1"}), anycl::ValidationError);
}

TEST_CASE("layers declare shapes - parameter counts and activation memory per sample") {
  const auto dense = anycl::make_layer({"dense", "5 relu glorot_uniform"});
  CHECK(dense->output_shape({3}) == anycl::Shape{5});
  CHECK(dense->parameter_count(anycl::Shape{3}) == 20);
  CHECK(dense->activation_floats({3}) == 8);
  CHECK(dense->output_features(3) == 5);
  CHECK_THROWS_AS(dense->output_shape({1, 28, 28}), anycl::ValidationError);
  CHECK_THROWS_AS(dense->parameter_count(anycl::Shape{size_t(1) << 62}), anycl::ValidationError);
  const auto dropout = anycl::make_layer({"dropout", "0.5"});
  CHECK(dropout->output_shape({2, 3}) == anycl::Shape{2, 3});
  CHECK(dropout->parameter_count(anycl::Shape{6}) == 0);
  CHECK(dropout->activation_floats({6}) == 6 + 2);  // y, and the mask at a byte per element
}

TEST_CASE("model_from_flags keeps the meaning of --layers and builds the reference model") {
  anycl::ModelFlags flags;
  const anycl::ModelSpec ref = anycl::reference_mlp(784, 10);
  CHECK(anycl::model_from_flags(flags, 784, 10).layers == ref.layers);
  anycl::Sequential by_hand(784);
  by_hand.dense(512, anycl::Activation::relu).dropout(0.2f).dense(512, anycl::Activation::relu).dropout(0.2f);
  by_hand.dense(10);
  CHECK(by_hand.spec().layers == ref.layers);
  CHECK(anycl::Sequential(ref).summary() == by_hand.summary());
  CHECK(anycl::Sequential(ref).parameter_count() == 669706);

  flags.layers = "64,32";
  flags.activation = anycl::Activation::tanh;
  flags.init = anycl::Init::he_uniform;
  flags.dropout = 0.f;
  const auto spec = anycl::model_from_flags(flags, 12, 3);
  CHECK(spec.layers == std::vector<anycl::LayerSpec>{{"dense", "64 tanh he_uniform"},
                                                     {"dense", "32 tanh he_uniform"},
                                                     {"dense", "3 linear he_uniform"}});
  flags.layers = "none";
  CHECK(anycl::model_from_flags(flags, 12, 3).layers.size() == 1);
  flags.layers = "16,dropout0.5,8";
  CHECK(anycl::model_from_flags(flags, 12, 3).layers[1] == anycl::LayerSpec{"dropout", "0.5"});
  for (const char* bad :
       {"0", "65537", "12,", ",12", "1x", "dropout1.5", "dropout", "-3", "99999999999999999999"}) {
    flags.layers = bad;
    CAPTURE(bad);
    CHECK_THROWS_WITH_AS(anycl::model_from_flags(flags, 12, 3), doctest::Contains("--layers"),
                         anycl::ValidationError);
  }
  flags.layers = "8";
  flags.loss = "hinge";
  CHECK_THROWS_WITH_AS(anycl::model_from_flags(flags, 12, 3), doctest::Contains("--loss"),
                       anycl::ValidationError);
}

TEST_CASE("anycl tune's shapes come from the model - the reference model gives its eight GEMMs") {
  const auto shapes = anycl::reference_model_gemm_shapes(128);
  const std::vector<std::tuple<std::string, bool, bool, size_t, size_t, size_t>> expected{
      {"fwd 1", false, false, 128, 512, 784}, {"fwd 2", false, false, 128, 512, 512},
      {"fwd 3", false, false, 128, 10, 512},  {"dW 3", true, false, 512, 10, 128},
      {"dX 3", false, true, 128, 512, 10},    {"dW 2", true, false, 512, 512, 128},
      {"dX 2", false, true, 128, 512, 512},   {"dW 1", true, false, 784, 512, 128}};
  REQUIRE(shapes.size() == expected.size());
  for (size_t i = 0; i < shapes.size(); ++i)
    CHECK(std::tie(shapes[i].label, shapes[i].trans_a, shapes[i].trans_b, shapes[i].m, shapes[i].n,
                   shapes[i].k) == expected[i]);
  anycl::ModelFlags flags;
  flags.layers = "64";
  const auto small =
      anycl::model_gemm_shapes(anycl::Sequential(anycl::model_from_flags(flags, 20, 3)), 32, nullptr);
  REQUIRE(small.size() == 5);  // fwd 1, fwd 2, dW 2, dX 2, dW 1
  CHECK(small[0].n == 64);
  CHECK(small[0].k == 20);
  CHECK(small.back().label == "dW 1");
}

TEST_CASE("a CNN's GEMM shapes include its convolutions', so anycl tune and the warm-up cover them") {
  // Keras' mnist_cnn at batch 4: conv 32 3×3 on 1×28×28 (P = 676), conv 64 3×3 on 32×26×26 (P = 576),
  // then Dense 128 on 9216 features and Dense 10.
  // On no device in particular (nullptr): every GEMM the layers can run, at the planner's defaults
  // (test_conv2d.cpp checks the shapes on a runtime).
  const auto shapes = anycl::model_gemm_shapes(anycl::Sequential(anycl::reference_cnn()), 4, nullptr);
  // The last number: calls per step (a weight gradient split over slices: anycl tune weighs it so).
  const std::vector<std::tuple<std::string, bool, bool, size_t, size_t, size_t, size_t>> expected{
      {"fwd 1", false, false, 32, 4 * 676, 9, 1}, {"fwd 2", false, false, 64, 4 * 576, 288, 1},
      {"fwd 3", false, false, 4, 128, 9216, 1},   {"fwd 4", false, false, 4, 10, 128, 1},
      {"dW 4", true, false, 128, 10, 4, 1},       {"dX 4", false, true, 4, 128, 10, 1},
      {"dW 3", true, false, 9216, 128, 4, 1},     {"dX 3", false, true, 4, 9216, 128, 1},
      {"dW 2", true, false, 64, 288, 576, 4},     {"dX 2", true, false, 288, 4 * 576, 64, 1},
      {"dW 1", true, false, 32, 9, 676, 4}};
  REQUIRE(shapes.size() == expected.size());
  for (size_t i = 0; i < shapes.size(); ++i)
    CHECK(std::tie(shapes[i].label, shapes[i].trans_a, shapes[i].trans_b, shapes[i].m, shapes[i].n,
                   shapes[i].k, shapes[i].count) == expected[i]);
}
