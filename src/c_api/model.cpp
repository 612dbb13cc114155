// Models through the C API: built from the CLI's words (`--layers` grammar, activation, init,
// dropout, loss) and an input shape, or read from a model file; the architecture and the host copy
// of the weights live in the handle, and the device copy is built when a runtime first needs it.
#include <fmt/format.h>

#include "anycl/error.hpp"
#include "anycl/losses/loss.hpp"
#include "anycl/nn/model_from_flags.hpp"
#include "c_api/contract.hpp"
#include "c_api/handles.hpp"

using namespace anycl::detail::c_api;

namespace anycl::detail::c_api {

Sequential& built_model(anycl_model& model, const anycl_runtime& rt, size_t batch) {
  if (!model.has_weights)
    throw ValidationError(
        "the model has no weights yet — train it (anycl_train) or load a trained one (anycl_model_load) "
        "first");
  if (!model.built || model.built_on != rt.serial || model.built_batch < batch) {
    model.forget_built();
    model.built = instantiate(model.saved, *rt.rt, batch);
    model.built_on = rt.serial;
    model.built_batch = batch;
  }
  return *model.built;
}

Predictor& model_predictor(anycl_model& model, const anycl_runtime& rt, size_t batch) {
  Sequential& built = built_model(model, rt, batch);
  if (!model.predictor) model.predictor = std::make_unique<Predictor>(built);
  return *model.predictor;
}

}  // namespace anycl::detail::c_api

namespace {

constexpr size_t kMaxOutputs = size_t(1) << 24;  // a Dense layer's most units (src/nn/dense.cpp)

std::string text_or(const char* text, const char* fallback) { return text && *text ? text : fallback; }

anycl::ModelSpec spec_from(const anycl_model_options& o) {
  check_struct_size("anycl_model_create", o.struct_size, sizeof(anycl_model_options),
                    "anycl_model_options_init");
  anycl::ModelFlags flags;
  flags.layers = text_or(o.layers, "512,512");
  try {
    flags.activation = anycl::parse_activation(text_or(o.activation, "relu"));
    flags.init = anycl::parse_init(text_or(o.init, "glorot_uniform"));
  } catch (const anycl::ValidationError& e) {
    throw anycl::ValidationError(std::string("anycl_model_create: options.activation or options.init: ") +
                                 e.what());
  }
  if (!(o.dropout >= 0.f && o.dropout < 1.f))
    throw anycl::ValidationError(
        fmt::format("anycl_model_create: dropout {} is outside [0, 1) — pass 0 for none", o.dropout));
  flags.dropout = o.dropout;
  flags.loss = text_or(o.loss, "softmax_cross_entropy");
  try {
    anycl::check_loss_name(flags.loss);
  } catch (const anycl::ValidationError& e) {
    throw anycl::ValidationError(std::string("anycl_model_create: options.loss: ") + e.what());
  }
  if (o.outputs == 0)
    throw anycl::ValidationError(
        "anycl_model_create: outputs is 0 — pass the number of classes (or of regression targets)");
  if (flags.loss == "softmax_cross_entropy" && o.outputs < 2)
    throw anycl::ValidationError(
        "anycl_model_create: outputs is 1 with the softmax_cross_entropy loss — a classifier needs at least "
        "2 classes (for one regression output, set loss to \"mse\"; for a binary classifier with one "
        "sigmoid output, to \"binary_crossentropy\")");
  if (o.outputs > kMaxOutputs)
    throw anycl::ValidationError(
        fmt::format("anycl_model_create: outputs is {} — at most {} classes or regression targets", o.outputs,
                    kMaxOutputs));
  const size_t* s = o.input_shape;
  if (s[0] == 0)
    throw anycl::ValidationError(
        "anycl_model_create: input_shape[0] is 0 — pass {features, 0, 0} or {channels, height, width}");
  if (s[1] != 0 && s[2] != 0 && (s[1] > SIZE_MAX / s[0] || s[2] > SIZE_MAX / (s[0] * s[1])))
    throw anycl::ValidationError(
        fmt::format("anycl_model_create: input_shape {{{}, {}, {}}} holds more values than a size_t counts",
                    s[0], s[1], s[2]));
  anycl::ModelSpec spec;
  if ((s[1] == 0) != (s[2] == 0))
    throw anycl::ValidationError(
        fmt::format("anycl_model_create: input_shape {{{}, {}, {}}} is neither {{features, 0, 0}} nor "
                    "{{channels, height, width}}",
                    s[0], s[1], s[2]));
  try {
    spec = s[1] == 0 ? anycl::model_from_flags(flags, s[0], o.outputs)
                     : anycl::model_from_flags(flags, anycl::Shape{s[0], s[1], s[2]}, o.outputs);
  } catch (const anycl::ValidationError& e) {
    std::string why = e.what();  // the CLI's flag names, in the C API's
    for (size_t at = why.find("--layers"); at != std::string::npos; at = why.find("--layers", at))
      why.replace(at, 8, "options.layers");
    throw anycl::ValidationError("anycl_model_create: " + why);
  }
  spec.loss = flags.loss;
  try {
    // The layers fit the input; sizes are checked for overflow here, not when the model is used.
    const size_t weights = anycl::Sequential(spec).weight_count();
    if (weights > SIZE_MAX / sizeof(float))
      throw anycl::ValidationError(
          fmt::format("the model would hold {} weights, more bytes than memory addresses", weights));
  } catch (const anycl::ValidationError& e) {
    throw anycl::ValidationError(fmt::format(
        "anycl_model_create: the layers \"{}\" do not fit input_shape {{{}, {}, {}}} with {} outputs: {}",
        flags.layers, s[0], s[1], s[2], o.outputs, e.what()));
  }
  return spec;
}

}  // namespace

extern "C" {

void anycl_model_options_init(anycl_model_options* options) {
  if (!options) return;
  *options = anycl_model_options{};
  options->struct_size = sizeof(anycl_model_options);
  options->layers = "512,512";
  options->activation = "relu";
  options->init = "glorot_uniform";
  options->dropout = 0.2f;
  options->loss = "softmax_cross_entropy";
}

anycl_status anycl_model_create(const anycl_model_options* options, anycl_model** out) {
  return guarded([&] {
    require(out, "anycl_model_create", "out");
    *out = nullptr;
    require(options, "anycl_model_create", "options");
    auto model = std::make_unique<anycl_model>();
    model->saved.spec = spec_from(*options);
    // A classifier's classes, a regressor's outputs: what the model file's `classes` line holds.
    model->saved.num_classes = options->outputs;
    *out = model.release();
  });
}

anycl_status anycl_model_load(const char* path, anycl_model** out) {
  return guarded([&] {
    require(out, "anycl_model_load", "out");
    *out = nullptr;
    require(path, "anycl_model_load", "path");
    auto model = std::make_unique<anycl_model>();
    model->saved = anycl::read_model(path);
    model->has_weights = true;
    *out = model.release();
  });
}

void anycl_model_destroy(anycl_model* model) { delete model; }

anycl_status anycl_model_input_size(const anycl_model* model, size_t* features) {
  return guarded([&] {
    require(model, "anycl_model_input_size", "model");
    require(features, "anycl_model_input_size", "features");
    *features = anycl::Sequential(model->saved.spec).input_features();
  });
}

anycl_status anycl_model_output_size(const anycl_model* model, size_t* outputs) {
  return guarded([&] {
    require(model, "anycl_model_output_size", "model");
    require(outputs, "anycl_model_output_size", "outputs");
    *outputs = anycl::Sequential(model->saved.spec).output_features();
  });
}

anycl_status anycl_model_input_shape(const anycl_model* model, size_t shape[3]) {
  return guarded([&] {
    require(model, "anycl_model_input_shape", "model");
    require(shape, "anycl_model_input_shape", "shape");
    const anycl::ModelSpec& spec = model->saved.spec;
    const bool image = spec.input_shape.size() == 3;
    for (size_t i = 0; i < 3; ++i) shape[i] = image ? spec.input_shape[i] : i == 0 ? spec.input_features : 0;
  });
}

anycl_status anycl_model_loss(const anycl_model* model, char* buffer, size_t capacity, size_t* length) {
  return guarded([&] {
    require(model, "anycl_model_loss", "model");
    copy_text(model->saved.spec.loss, buffer, capacity, length, "anycl_model_loss");
  });
}

anycl_status anycl_model_has_weights(const anycl_model* model, int* has_weights) {
  return guarded([&] {
    require(model, "anycl_model_has_weights", "model");
    require(has_weights, "anycl_model_has_weights", "has_weights");
    *has_weights = model->has_weights ? 1 : 0;
  });
}

anycl_status anycl_model_summary(const anycl_model* model, char* buffer, size_t capacity, size_t* length) {
  return guarded([&] {
    require(model, "anycl_model_summary", "model");
    copy_text(anycl::Sequential(model->saved.spec).summary(), buffer, capacity, length,
              "anycl_model_summary");
  });
}

}  // extern "C"
