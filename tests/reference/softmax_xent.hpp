// Plain-loop softmax + cross-entropy + gradient (cl_kernels/softmax_xent.cl), in double so it can
// also serve finite differences; returns the loss sum and the correct count the kernel reports.
#pragma once

#include <cmath>
#include <cstddef>
#include <vector>

namespace anycl::reference {

struct XentMetrics {
  double loss_sum = 0;  // Σ_rows −log softmax(z)[label]
  double correct = 0;   // rows whose (first) argmax is the label
};

/// logits:(rows,classes) labels:(rows); dlogits:(rows,classes) or null:
/// dlogits = (softmax(z) − onehot(label))·grad_scale.
template <typename T>
XentMetrics softmax_xent(const T* logits, const int* labels, size_t rows, size_t classes, double grad_scale,
                         float* dlogits) {
  XentMetrics out;
  std::vector<double> e(classes);
  for (size_t r = 0; r < rows; ++r) {
    const T* z = logits + r * classes;
    const size_t label = size_t(labels[r]);
    size_t argmax = 0;
    for (size_t c = 1; c < classes; ++c)
      if (z[c] > z[argmax]) argmax = c;  // strict: the first maximum wins, as on the device
    double sum = 0;
    for (size_t c = 0; c < classes; ++c) sum += e[c] = std::exp(double(z[c]) - double(z[argmax]));
    out.loss_sum += std::log(sum) - (double(z[label]) - double(z[argmax]));
    out.correct += argmax == label ? 1 : 0;
    if (dlogits)
      for (size_t c = 0; c < classes; ++c)
        dlogits[r * classes + c] = float((e[c] / sum - (c == label ? 1.0 : 0.0)) * grad_scale);
  }
  return out;
}

}  // namespace anycl::reference
