// Launchers for the split form of cl_kernels/batchnorm.cl's reductions: a 2-D range of (splits,
// channels) work-groups into the scratch buffer, then one group a channel finishing.
#include "batchnorm_split.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "kernel_call.hpp"

namespace anycl {

size_t batchnorm_most_splits(size_t channels, size_t compute_units, size_t forced) {
  if (forced != 0) return forced;
  const size_t wanted = BatchNormSplitReductions::kGroupsPerComputeUnit * std::max<size_t>(1, compute_units);
  return std::max<size_t>(1, (wanted + channels - 1) / std::max<size_t>(1, channels));
}

BatchNormSplit batchnorm_split(const BatchNormShape& s, size_t compute_units, size_t work_group,
                               size_t forced) {
  const size_t values = s.batch * s.plane;
  size_t splits = batchnorm_most_splits(s.channels, compute_units, forced);
  if (forced == 0)
    splits =
        std::min(splits, values / (BatchNormSplitReductions::kLaneValues * std::max<size_t>(1, work_group)));
  splits = std::clamp<size_t>(splits, 1, std::max<size_t>(1, values));
  BatchNormSplit plan;
  plan.share = (values + splits - 1) / splits;
  plan.splits = plan.share == 0 ? 1 : (values + plan.share - 1) / plan.share;  // no empty share
  return plan;
}

BatchNormSplitReductions::BatchNormSplitReductions(Runtime& rt, const std::string& options,
                                                   size_t forced_splits)
    : rt_(rt), forced_(forced_splits) {
  stats_ = detail::batchnorm_group_kernel(rt, "batchnorm_stats_partial", options, stats_group_);
  stats_finish_ = detail::batchnorm_group_kernel(rt, "batchnorm_stats_finish", options, stats_finish_group_);
  sums_ = detail::batchnorm_group_kernel(rt, "batchnorm_backward_sums_partial", options, sums_group_);
  sums_finish_ =
      detail::batchnorm_group_kernel(rt, "batchnorm_backward_sums_finish", options, sums_finish_group_);
}

BatchNormSplit BatchNormSplitReductions::plan(const BatchNormShape& s) const {
  return batchnorm_split(s, rt_.info().compute_units, stats_group_, forced_);
}

Tensor& BatchNormSplitReductions::partials(size_t channels) {
  const size_t floats = 2 * channels * batchnorm_most_splits(channels, rt_.info().compute_units, forced_);
  if (partial_.size() < floats) partial_ = Tensor(rt_, {floats});
  return partial_;
}

void BatchNormSplitReductions::launch_partials(compute::kernel& k, size_t group, const BatchNormShape& s,
                                               const BatchNormSplit& plan, const char* name) {
  const size_t global[2] = {plan.splits * group, s.channels}, local[2] = {group, 1};
  detail::enqueue_range(rt_, k, 2, global, local, [&] {
    return fmt::format("{} {}x{}x{} split {}", name, s.batch, s.channels, s.plane, plan.splits);
  });
}

void BatchNormSplitReductions::launch_finish(compute::kernel& k, size_t group, const BatchNormShape& s,
                                             const char* name) {
  const size_t global = s.channels * group, local = group;
  detail::enqueue_range(rt_, k, 1, &global, &local,
                        [&] { return fmt::format("{} {}x{}x{}", name, s.batch, s.channels, s.plane); });
}

void BatchNormSplitReductions::stats(const Tensor& x, const BatchNormShape& s, const BatchNormSplit& plan,
                                     Tensor& stats, Tensor* moving, float momentum) {
  using detail::u32;
  Tensor& part = partials(s.channels);
  detail::set_args(stats_, x.mem(), u32(x.offset(), "offset"), u32(s.batch, "batch"),
                   u32(s.channels, "channels"), u32(s.plane, "plane"), u32(plan.splits, "splits"),
                   u32(plan.share, "share"), part.mem());
  launch_partials(stats_, stats_group_, s, plan, "batchnorm_stats_partial");
  Tensor& m = moving ? *moving : stats;
  detail::set_args(stats_finish_, part.mem(), u32(plan.splits, "splits"), x.mem(), u32(x.offset(), "offset"),
                   u32(s.batch, "batch"), u32(s.channels, "channels"), u32(s.plane, "plane"), stats.mem(),
                   m.mem(), u32(m.offset(), "offset"), cl_float(momentum), cl_uint(moving ? 1 : 0));
  launch_finish(stats_finish_, stats_finish_group_, s, "batchnorm_stats_finish");
}

void BatchNormSplitReductions::sums(const Tensor& x, const Tensor& dy, const BatchNormShape& s,
                                    const BatchNormSplit& plan, const Tensor& stats, const Tensor& params,
                                    float epsilon, Tensor& grads) {
  using detail::u32;
  Tensor& part = partials(s.channels);
  detail::set_args(sums_, x.mem(), u32(x.offset(), "offset"), dy.mem(), u32(dy.offset(), "offset"),
                   u32(s.batch, "batch"), u32(s.channels, "channels"), u32(s.plane, "plane"), stats.mem(),
                   cl_float(epsilon), params.mem(), u32(params.offset(), "offset"),
                   u32(plan.splits, "splits"), u32(plan.share, "share"), part.mem());
  launch_partials(sums_, sums_group_, s, plan, "batchnorm_backward_sums_partial");
  detail::set_args(sums_finish_, part.mem(), u32(plan.splits, "splits"), u32(s.channels, "channels"),
                   grads.mem(), u32(grads.offset(), "offset"));
  launch_finish(sums_finish_, sums_finish_group_, s, "batchnorm_backward_sums_finish");
}

}  // namespace anycl
