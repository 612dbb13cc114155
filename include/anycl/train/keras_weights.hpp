// A model's weights as Keras lays them out (what get_weights() returns): per Dense layer the kernel
// (in, out) and the bias (out,); per Conv2D the kernel (kh, kw, in, out) and the bias (filters,); per
// BatchNormalization gamma, beta, moving_mean and moving_variance (C,) each, the last two from the state.
// anycl stores Conv2D kernels as (filters, in, kh, kw) (docs/model-format.md): converted here.
#pragma once

#include <string>
#include <vector>

#include "anycl/nn/sequential.hpp"

namespace anycl {

/// One weight array of a model, in Keras' order and shape.
struct WeightArray {
  size_t layer = 0;           // the layer's index in the model
  std::string name;           // "dense_0/kernel", "conv2d_1/bias"
  std::vector<size_t> shape;  // Keras' shape
  size_t offset = 0;          // where it starts in Sequential::download_weights() (parameters, then state)
  size_t count = 0;           // floats it holds
  bool conv_kernel = false;   // stored (filters, in, kh, kw): transposed to Keras' (kh, kw, in, filters)
};

/// Every weight array of the model `spec` describes, input to output (kernel, then bias).
std::vector<WeightArray> weight_arrays(const ModelSpec& spec);
/// Array `a` of the flat `parameters` (Sequential::download_weights() layout), in Keras' layout.
std::vector<float> keras_weights(const WeightArray& a, const std::vector<float>& parameters);
/// Writes `values` (a.count floats in Keras' layout) into array `a` of the flat `parameters`.
void set_keras_weights(const WeightArray& a, const float* values, std::vector<float>& parameters);

}  // namespace anycl
