// A model's weights through the C API, array by array in Keras' layout (keras_weights.hpp), so
// weights move between anycl, Keras and PyTorch: count, shape, get, set.
#include <fmt/format.h>

#include <cmath>

#include "anycl/error.hpp"
#include "anycl/train/keras_weights.hpp"
#include "c_api/handles.hpp"

using namespace anycl::detail::c_api;

namespace {

anycl::WeightArray array_at(const anycl_model& model, size_t index, const char* call) {
  const auto arrays = anycl::weight_arrays(model.saved.spec);
  if (index >= arrays.size())
    throw anycl::ValidationError(
        fmt::format("{}: index {} is past the model's {} weight arrays — ask anycl_model_weight_count", call,
                    index, arrays.size()));
  return arrays[index];
}

}  // namespace

extern "C" {

anycl_status anycl_model_weight_count(const anycl_model* model, size_t* arrays) {
  return guarded([&] {
    require(model, "anycl_model_weight_count", "model");
    require(arrays, "anycl_model_weight_count", "arrays");
    *arrays = anycl::weight_arrays(model->saved.spec).size();
  });
}

anycl_status anycl_model_weight_shape(const anycl_model* model, size_t index, size_t* ndim, size_t shape[4]) {
  const char* call = "anycl_model_weight_shape";
  return guarded([&] {
    require(model, call, "model");
    require(ndim, call, "ndim");
    require(shape, call, "shape");
    const anycl::WeightArray a = array_at(*model, index, call);
    *ndim = a.shape.size();
    for (size_t i = 0; i < 4; ++i) shape[i] = i < a.shape.size() ? a.shape[i] : 0;
  });
}

anycl_status anycl_model_get_weights(const anycl_model* model, size_t index, float* out, size_t capacity) {
  const char* call = "anycl_model_get_weights";
  return guarded([&] {
    require(model, call, "model");
    require(out, call, "out");
    const auto lock = lock_model(*model);  // another thread's anycl_train replaces the weights under it
    const anycl::WeightArray a = array_at(*model, index, call);
    if (!model->has_weights)
      throw anycl::ValidationError(fmt::format(
          "{}: the model has no weights yet — train it (anycl_train), load one (anycl_model_load) or set "
          "them (anycl_model_set_weights)",
          call));
    if (capacity < a.count)
      throw anycl::ValidationError(
          fmt::format("{}: out holds {} floats, {} ({}) needs {} — pass a larger buffer", call, capacity,
                      a.name, fmt::join(a.shape, "×"), a.count));
    const std::vector<float> values = anycl::keras_weights(a, model->saved.parameters);
    std::copy(values.begin(), values.end(), out);
  });
}

anycl_status anycl_model_set_weights(anycl_model* model, size_t index, const float* values, size_t count) {
  const char* call = "anycl_model_set_weights";
  return guarded([&] {
    require(model, call, "model");
    require(values, call, "values");
    const auto lock = lock_model(*model);
    if (model->training)
      throw anycl::ValidationError(fmt::format(
          "{}: the model is training (called from a training callback) — set its weights after anycl_train "
          "returns",
          call));
    const anycl::WeightArray a = array_at(*model, index, call);
    if (count != a.count)
      throw anycl::ValidationError(fmt::format("{}: {} has shape ({}), {} floats, but count is {}", call,
                                               a.name, fmt::join(a.shape, ", "), a.count, count));
    for (size_t i = 0; i < count; ++i)
      if (!std::isfinite(values[i]))
        throw anycl::ValidationError(
            fmt::format("{}: values[{}] of {} is {} — weights must be finite", call, i, a.name, values[i]));
    std::vector<float> parameters = model->saved.parameters;
    if (!model->has_weights) parameters.assign(anycl::Sequential(model->saved.spec).weight_count(), 0.f);
    anycl::set_keras_weights(a, values, parameters);
    model->saved.parameters = std::move(parameters);
    model->has_weights = true;
    model->forget_built();
  });
}

}  // extern "C"
