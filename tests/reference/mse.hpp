// Plain-loop mean squared error + gradient + mean absolute error (cl_kernels/mse.cl), in double
// so it can also serve finite differences; returns the sums the kernel writes to its slot.
#pragma once

#include <cmath>
#include <cstddef>

namespace anycl::reference {

struct MseMetrics {
  double loss_sum = 0;  // Σ_rows mean_j (y − t)²
  double mae_sum = 0;   // Σ_rows mean_j |y − t|
};

/// outputs,targets:(rows,width); grad:(rows,width) or null: grad = 2(y − t)/width · grad_scale.
template <typename T>
MseMetrics mse(const T* outputs, const float* targets, size_t rows, size_t width, double grad_scale,
               float* grad) {
  MseMetrics out;
  for (size_t r = 0; r < rows; ++r) {
    double squares = 0, absolutes = 0;
    for (size_t c = 0; c < width; ++c) {
      const double d = double(outputs[r * width + c]) - double(targets[r * width + c]);
      squares += d * d;
      absolutes += std::fabs(d);
      if (grad) grad[r * width + c] = float(2.0 * d / double(width) * grad_scale);
    }
    out.loss_sum += squares / double(width);
    out.mae_sum += absolutes / double(width);
  }
  return out;
}

}  // namespace anycl::reference
