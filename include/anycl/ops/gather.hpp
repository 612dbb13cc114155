// Batch assembly on the device from a resident byte-valued data set (cl_kernels/gather.cl):
// no host work and no transfer per step.
#pragma once

#include "anycl/tensor.hpp"

namespace anycl {

class GatherBatch {
 public:
  /// Fetches the kernel once; launches reuse it.
  explicit GatherBatch(Runtime& rt);
  /// For r < x.rows(): x[r,:] = images[order[first+r],:]/255 and labels_out[r] = labels[order[first+r]].
  /// images: uchar (count, x.cols()); labels: uchar (count); order: uint; labels_out: int.
  void run(const compute::buffer& images, const compute::buffer& labels, const compute::buffer& order,
           size_t first, Tensor& x, compute::buffer& labels_out, size_t labels_out_offset = 0);

 private:
  Runtime& rt_;
  compute::kernel kernel_;
};

}  // namespace anycl
