// Keras' weight layout over anycl's flat parameters: Dense kernels are stored as Keras holds them;
// Conv2D kernels are transposed between anycl's (filters, in, kh, kw) and Keras' (kh, kw, in, filters).
#include "anycl/train/keras_weights.hpp"

#include <fmt/format.h>

#include "anycl/error.hpp"
#include "anycl/nn/batchnorm.hpp"
#include "anycl/nn/conv2d.hpp"
#include "anycl/nn/dense.hpp"

namespace anycl {

std::vector<WeightArray> weight_arrays(const ModelSpec& spec) {
  const Sequential model(spec);
  Shape shape = spec.input_shape.empty() ? Shape{spec.input_features} : spec.input_shape;
  std::vector<WeightArray> out;
  size_t offset = 0, state_offset = model.parameter_count();  // the state follows every parameter
  for (size_t i = 0; i < model.layers().size(); ++i) {
    const Layer& layer = *model.layers()[i];
    const size_t count = layer.parameter_count(shape);
    if (dynamic_cast<const BatchNormalization*>(&layer)) {
      // Keras' order: gamma, beta (trainable), moving_mean, moving_variance (the layer's state).
      const size_t c = BatchNormalization::channels(shape);
      const char* names[] = {"gamma", "beta", "moving_mean", "moving_variance"};
      for (size_t k = 0; k < 4; ++k) {
        WeightArray a;
        a.layer = i;
        a.name = fmt::format("batch_normalization_{}/{}", i, names[k]);
        a.shape = {c};
        a.count = c;
        a.offset = k < 2 ? offset + k * c : state_offset + (k - 2) * c;
        out.push_back(a);
      }
      state_offset += layer.state_count(shape);
    } else if (count > 0) {
      WeightArray kernel, bias;
      kernel.layer = bias.layer = i;
      if (const auto* dense = dynamic_cast<const Dense*>(&layer)) {
        const size_t in = shape_size(shape), units = dense->units();
        kernel.name = fmt::format("dense_{}/kernel", i);
        kernel.shape = {in, units};
        bias.name = fmt::format("dense_{}/bias", i);
        bias.shape = {units};
      } else if (const auto* conv = dynamic_cast<const Conv2D*>(&layer)) {
        const size_t k = conv->kernel(), f = conv->filters(), c = shape.at(0);
        kernel.name = fmt::format("conv2d_{}/kernel", i);
        kernel.shape = {k, k, c, f};
        kernel.conv_kernel = true;
        bias.name = fmt::format("conv2d_{}/bias", i);
        bias.shape = {f};
      } else {
        throw UnsupportedError(fmt::format(
            "layer {} ({}) has weights but no Keras layout in anycl yet — add it to keras_weights.cpp", i,
            layer.kind()));
      }
      bias.count = bias.shape[0];
      kernel.count = count - bias.count;
      kernel.offset = offset;
      bias.offset = offset + kernel.count;
      out.push_back(kernel);
      out.push_back(bias);
    }
    offset += count;
    shape = layer.output_shape(shape);
  }
  return out;
}

std::vector<float> keras_weights(const WeightArray& a, const std::vector<float>& parameters) {
  if (a.offset + a.count > parameters.size())
    throw ValidationError(fmt::format("{}: the model holds {} parameters, fewer than the array needs", a.name,
                                      parameters.size()));
  const float* p = parameters.data() + a.offset;
  if (!a.conv_kernel) return {p, p + a.count};
  const size_t k = a.shape[0], c = a.shape[2], f = a.shape[3];
  std::vector<float> out(a.count);
  for (size_t o = 0; o < f; ++o)
    for (size_t ch = 0; ch < c; ++ch)
      for (size_t y = 0; y < k; ++y)
        for (size_t x = 0; x < k; ++x)
          out[((y * k + x) * c + ch) * f + o] = p[((o * c + ch) * k + y) * k + x];
  return out;
}

void set_keras_weights(const WeightArray& a, const float* values, std::vector<float>& parameters) {
  if (a.offset + a.count > parameters.size())
    throw ValidationError(fmt::format("{}: the model holds {} parameters, fewer than the array needs", a.name,
                                      parameters.size()));
  float* p = parameters.data() + a.offset;
  if (!a.conv_kernel) {
    std::copy(values, values + a.count, p);
    return;
  }
  const size_t k = a.shape[0], c = a.shape[2], f = a.shape[3];
  for (size_t o = 0; o < f; ++o)
    for (size_t ch = 0; ch < c; ++ch)
      for (size_t y = 0; y < k; ++y)
        for (size_t x = 0; x < k; ++x)
          p[((o * c + ch) * k + y) * k + x] = values[((y * k + x) * c + ch) * f + o];
}

}  // namespace anycl
