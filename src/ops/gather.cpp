// Launcher for cl_kernels/gather.cl.
#include "anycl/ops/gather.hpp"

#include "kernel_call.hpp"

namespace anycl {

GatherBatch::GatherBatch(Runtime& rt) : rt_(rt), kernel_(rt.kernel("gather", "gather_batch")) {}

void GatherBatch::run(const compute::buffer& images, const compute::buffer& labels,
                      const compute::buffer& order, size_t first, Tensor& x, compute::buffer& labels_out,
                      size_t labels_out_offset) {
  using detail::u32;
  detail::set_args(kernel_, images.get(), labels.get(), order.get(), u32(first, "first"),
                   u32(x.rows(), "rows"), u32(x.cols(), "features"), x.mem(), u32(x.offset(), "offset"),
                   labels_out.get(), u32(labels_out_offset, "offset"));
  detail::launch_1d(rt_, kernel_, x.size());
}

}  // namespace anycl
