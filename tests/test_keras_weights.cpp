// Keras' surface in C++: per-layer activations in the --layers grammar (TOKEN:ACTIVATION) and the
// Keras weight layout (Dense (in, out); Conv2D (kh, kw, in, out), transposed from anycl's storage).
#include <doctest/doctest.h>
#include <anycl/error.hpp>
#include <anycl/nn/model_from_flags.hpp>
#include <anycl/train/keras_weights.hpp>

#include <numeric>

#include "data_files.hpp"

using anycl::test::contains_all;
using anycl::test::thrown_message;

TEST_CASE("a --layers token may name its own activation, Keras' activation= per layer") {
  anycl::ModelFlags flags;
  flags.layers = "conv4x3:tanh,flatten,32:sigmoid,16";
  flags.dropout = 0;
  const anycl::ModelSpec spec = anycl::model_from_flags(flags, anycl::Shape{1, 6, 6}, 3);
  REQUIRE(spec.layers.size() == 5);
  CHECK(spec.layers[0].text().find(" tanh ") != std::string::npos);
  CHECK(spec.layers[2].text() == "dense 32 sigmoid glorot_uniform");
  CHECK(spec.layers[3].text() == "dense 16 relu glorot_uniform");  // the model's default
  CHECK(spec.layers[4].text() == "dense 3 linear glorot_uniform");

  const auto refused = [](const std::string& layers) {
    anycl::ModelFlags f;
    f.layers = layers;
    return thrown_message<anycl::ValidationError>([&] {
      anycl::model_from_flags(f, anycl::Shape{1, 6, 6}, 3);
    });
  };
  const std::string pool = refused("pool2:relu,flatten,8");
  CHECK_MESSAGE(contains_all(pool, {"--layers", "pool2:relu", "only Dense"}), pool);
  const std::string unknown = refused("8:swish");
  CHECK_MESSAGE(contains_all(unknown, {"--layers", "swish", "gelu"}), unknown);  // the choices named
  // Keras' leaky_relu (slope 0.2), elu and gelu (exact) per layer, on Dense and Conv2D alike.
  anycl::ModelFlags more;
  more.layers = "conv4x3:gelu,flatten,32:leaky_relu,16:elu";
  more.dropout = 0;
  const anycl::ModelSpec with = anycl::model_from_flags(more, anycl::Shape{1, 6, 6}, 3);
  CHECK(with.layers[0].text().find(" gelu ") != std::string::npos);
  CHECK(with.layers[2].text() == "dense 32 leaky_relu glorot_uniform");
  CHECK(with.layers[3].text() == "dense 16 elu glorot_uniform");
}

TEST_CASE("weights in Keras' layout: Dense kernels as stored, Conv2D kernels transposed both ways") {
  anycl::ModelFlags flags;
  flags.layers = "conv2x3,flatten,4";
  flags.dropout = 0;
  const anycl::ModelSpec spec = anycl::model_from_flags(flags, anycl::Shape{3, 5, 5}, 2);
  const auto arrays = anycl::weight_arrays(spec);
  REQUIRE(arrays.size() == 6);
  CHECK(arrays[0].shape == std::vector<size_t>{3, 3, 3, 2});
  CHECK(arrays[0].conv_kernel);
  CHECK(arrays[1].shape == std::vector<size_t>{2});
  CHECK(arrays[2].shape == std::vector<size_t>{18, 4});
  CHECK(arrays[3].name == "dense_2/bias");
  CHECK(arrays[5].shape == std::vector<size_t>{2});
  CHECK(arrays[5].offset + arrays[5].count == anycl::Sequential(spec).parameter_count());

  std::vector<float> params(anycl::Sequential(spec).parameter_count());
  std::iota(params.begin(), params.end(), 0.f);
  const std::vector<float> kernel = anycl::keras_weights(arrays[0], params);
  // Keras [ky][kx][c][f] = anycl [f][c][ky][kx]: ky=1, kx=2, c=1, f=1.
  CHECK(kernel[((1 * 3 + 2) * 3 + 1) * 2 + 1] == params[((1 * 3 + 1) * 3 + 1) * 3 + 2]);
  std::vector<float> back(params.size(), -1.f);
  for (const auto& a : arrays) anycl::set_keras_weights(a, anycl::keras_weights(a, params).data(), back);
  CHECK(back == params);
}
