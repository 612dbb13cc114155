// Plain-loop bias + activation forward and backward (cl_kernels/activation.cl). Templated on the
// value type: float mirrors the device, double serves finite differences.
#pragma once

#include <anycl/nn/activation.hpp>

#include <cmath>
#include <cstddef>

namespace anycl::reference {

template <typename T>
T activate(T z, Activation act) {
  switch (act) {
    case Activation::relu:
      return z > T(0) ? z : T(0);
    case Activation::tanh:
      return std::tanh(z);
    case Activation::sigmoid:
      return T(1) / (T(1) + std::exp(-z));
    case Activation::leaky_relu:  // Keras' LeakyReLU slope
      return z > T(0) ? z : T(0.2) * z;
    case Activation::elu:  // alpha 1
      return z > T(0) ? z : std::expm1(z);
    case Activation::gelu:  // exact: z·Φ(z)
      return T(0.5) * z * (T(1) + std::erf(z / std::sqrt(T(2))));
    default:
      return z;
  }
}

/// act'(z), the textbook derivative from the input z (the kernels take it from the output y, or,
/// for gelu, from the z the layer keeps: this is the independent form they are checked against).
template <typename T>
T activate_derivative(T z, Activation act) {
  switch (act) {
    case Activation::relu:
      return z > T(0) ? T(1) : T(0);
    case Activation::tanh: {
      const T t = std::tanh(z);
      return T(1) - t * t;
    }
    case Activation::sigmoid: {
      const T s = T(1) / (T(1) + std::exp(-z));
      return s * (T(1) - s);
    }
    case Activation::leaky_relu:
      return z > T(0) ? T(1) : T(0.2);
    case Activation::elu:
      return z > T(0) ? T(1) : std::exp(z);
    case Activation::gelu: {  // Φ(z) + z·φ(z)
      const T pi = T(3.14159265358979323846);
      return T(0.5) * (T(1) + std::erf(z / std::sqrt(T(2)))) +
             z * std::exp(-z * z / T(2)) / std::sqrt(T(2) * pi);
    }
    default:
      return T(1);
  }
}

/// y = act(y + bias), in place.  y:(rows,cols) bias:(cols)
template <typename T>
void bias_activation_forward(T* y, const T* bias, size_t rows, size_t cols, Activation act) {
  for (size_t r = 0; r < rows; ++r)
    for (size_t c = 0; c < cols; ++c) y[r * cols + c] = activate(y[r * cols + c] + bias[c], act);
}

/// dy ← dy·act'(z) in place, z the activation's input (y + bias before the activation);
/// dbias[c] = Σ_r dy[r,c] summed in row order (the kernel adds row lanes in a tree: equal up to
/// rounding).  z,dy:(rows,cols) dbias:(cols)
template <typename T>
void bias_activation_backward(const T* z, T* dy, T* dbias, size_t rows, size_t cols, Activation act) {
  for (size_t c = 0; c < cols; ++c) {
    T sum = T(0);
    for (size_t r = 0; r < rows; ++r) {
      const size_t i = r * cols + c;
      dy[i] = dy[i] * activate_derivative(z[i], act);
      sum += dy[i];
    }
    dbias[c] = sum;
  }
}

}  // namespace anycl::reference
