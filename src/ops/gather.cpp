// Launcher for cl_kernels/gather.cl: one program variant per (feature, target) type pair.
#include "gather.hpp"

#include "kernel_call.hpp"

namespace anycl {

GatherBatch::GatherBatch(Runtime& rt) : rt_(rt) { kernel(DType::u8, DType::u8); }

compute::kernel& GatherBatch::kernel(DType features, DType targets) {
  auto it = kernels_.find({features, targets});
  if (it != kernels_.end()) return it->second;
  if (features == DType::i32)
    throw ValidationError("gather: features must be u8 or f32, not i32 — convert them to float");
  std::string options = features == DType::f32 ? "-DX_F32" : "";
  if (targets != DType::u8) options += targets == DType::f32 ? " -DT_F32" : " -DT_I32";
  cl_int status = CL_SUCCESS;
  cl_kernel k = clCreateKernel(detail::program(rt_, "gather", options).get(), "gather_batch", &status);
  detail::check_cl(status, "clCreateKernel",
                   fmt::format("gather_batch (program gather, options '{}')", options));
  return kernels_.emplace(std::make_pair(features, targets), compute::kernel(k, /*retain=*/false))
      .first->second;
}

void GatherBatch::run(const GatherSource& source, const DeviceBuffer& order, size_t first, Tensor& x,
                      DeviceBuffer& targets_out, size_t targets_offset) {
  using detail::u32;
  const size_t width = source.target_type == DType::f32 ? source.target_width : 1;
  if (width == 0) throw ValidationError("gather: float targets need a width of at least 1");
  compute::kernel& k = kernel(source.feature_type, source.target_type);
  detail::set_args(k, source.features->mem(), source.targets->mem(), order.mem(), u32(first, "first"),
                   u32(x.rows(), "rows"), u32(x.cols(), "features"), u32(width, "target width"), x.mem(),
                   u32(x.offset(), "offset"), targets_out.mem(), u32(targets_offset, "offset"));
  detail::launch_2d(rt_, k, std::max(x.cols(), width), x.rows(),
                    /*per_item=*/16);  // gather.cl's columns per work-item
}

}  // namespace anycl
