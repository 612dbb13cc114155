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
    default:
      return z;
  }
}

/// act'(z) written through y = act(z), as the kernel does (the input need not be kept).
template <typename T>
T activate_grad_from_output(T y, Activation act) {
  switch (act) {
    case Activation::relu:
      return y > T(0) ? T(1) : T(0);
    case Activation::tanh:
      return T(1) - y * y;
    case Activation::sigmoid:
      return y * (T(1) - y);
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

/// dy ← dy·act'(y) in place; dbias[c] = Σ_r dy[r,c] summed in row order (the kernel adds row lanes
/// in a tree: equal up to rounding).
/// y,dy:(rows,cols) dbias:(cols)
template <typename T>
void bias_activation_backward(const T* y, T* dy, T* dbias, size_t rows, size_t cols, Activation act) {
  for (size_t c = 0; c < cols; ++c) {
    T sum = T(0);
    for (size_t r = 0; r < rows; ++r) {
      const size_t i = r * cols + c;
      dy[i] = dy[i] * activate_grad_from_output(y[i], act);
      sum += dy[i];
    }
    dbias[c] = sum;
  }
}

}  // namespace anycl::reference
