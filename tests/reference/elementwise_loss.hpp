// Plain-loop mean absolute error, Huber (delta 1) and binary cross-entropy from logits
// (cl_kernels/elementwise_loss.cl), in double so they also serve finite differences; each returns
// the sums the kernel writes to its slot (loss; MAE or binary accuracy).
#pragma once

#include <cmath>
#include <cstddef>
#include <string>

namespace anycl::reference {

struct ElementwiseMetrics {
  double loss_sum = 0;    // Σ_rows mean_j loss(y, t)
  double metric_sum = 0;  // Σ_rows mean_j |y − t|, or mean_j [(y > 0) == t] for binary cross-entropy
};

/// One element: the loss, its derivative in y (*grad) and the metric, by the textbook formulas
/// (binary cross-entropy as −t·log σ(z) − (1 − t)·log(1 − σ(z)), through log1p for small σ).
inline double element_loss(const std::string& loss, double y, double t, double* grad, double* metric) {
  if (loss == "binary_crossentropy") {
    const double p = 1.0 / (1.0 + std::exp(-y));
    *grad = p - t;
    *metric = ((y > 0 ? 1.0 : 0.0) == t) ? 1.0 : 0.0;
    // log σ(z) = −log1p(e^−z), log(1 − σ(z)) = −log1p(e^z)
    return t * std::log1p(std::exp(-y)) + (1 - t) * std::log1p(std::exp(y));
  }
  const double d = y - t, a = std::fabs(d);
  *metric = a;
  if (loss == "huber") {
    *grad = a <= 1 ? d : (d > 0 ? 1 : -1);
    return a <= 1 ? 0.5 * d * d : a - 0.5;
  }
  *grad = d > 0 ? 1 : d < 0 ? -1 : 0;
  return a;
}

/// outputs,targets:(rows,width); grad:(rows,width) or null: grad = ∂loss/∂y / width · grad_scale.
template <typename T>
ElementwiseMetrics elementwise_loss(const std::string& loss, const T* outputs, const float* targets,
                                    size_t rows, size_t width, double grad_scale, float* grad) {
  ElementwiseMetrics out;
  for (size_t r = 0; r < rows; ++r) {
    double row_loss = 0, row_metric = 0;
    for (size_t c = 0; c < width; ++c) {
      double g = 0, m = 0;
      row_loss += element_loss(loss, double(outputs[r * width + c]), double(targets[r * width + c]), &g, &m);
      row_metric += m;
      if (grad) grad[r * width + c] = float(g / double(width) * grad_scale);
    }
    out.loss_sum += row_loss / double(width);
    out.metric_sum += row_metric / double(width);
  }
  return out;
}

/// The sigmoid of each value (a binary cross-entropy model's predictions).
inline double sigmoid(double z) { return 1.0 / (1.0 + std::exp(-z)); }

}  // namespace anycl::reference
