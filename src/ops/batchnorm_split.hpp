// BatchNorm's per-channel reductions split over several work-groups a channel (GPUs): each group
// sums a fixed contiguous share of the channel's (sample, position) values into a scratch buffer,
// then a second launch adds each channel's partials in a fixed order and finishes as the one-group
// kernels do (cl_kernels/batchnorm.cl, "the split form"). No atomics: reruns on a device give the
// same bits; the order of the sums differs from the one-group form's, so the results may differ
// from a CPU's in the last bits.
#pragma once

#include <memory>
#include <string>

#include "ops/batchnorm.hpp"

namespace anycl {

/// How a channel's batch·plane values are cut: `splits` shares of `share` values (the last one
/// shorter), none empty.
struct BatchNormSplit {
  size_t splits = 1, share = 0;
};

/// Groups a channel for `s`: `forced` when not 0 (tests), else enough groups for
/// kGroupsPerComputeUnit on every compute unit, but no share under kLaneValues values a lane of
/// `work_group`; at most batchnorm_most_splits(s.channels, …), at most one a value.
BatchNormSplit batchnorm_split(const BatchNormShape& s, size_t compute_units, size_t work_group,
                               size_t forced);
/// The most groups a channel batchnorm_split gives for `channels` (whatever the batch): the
/// scratch buffer's size.
size_t batchnorm_most_splits(size_t channels, size_t compute_units, size_t forced);

class BatchNormSplitReductions {
 public:
  static constexpr size_t kGroupsPerComputeUnit = 8, kLaneValues = 4;

  /// Fetches the four kernels compiled with `options` (the activation's -D, as BatchNormOp's).
  BatchNormSplitReductions(Runtime& rt, const std::string& options, size_t forced_splits);
  /// The cut for `s` (for batchnorm_stats_partial's work-group; both partial kernels share it).
  BatchNormSplit plan(const BatchNormShape& s) const;
  /// Whether `plan` should run here: forced, or more than one group a channel (one group is the
  /// one-group kernel's work in one launch instead of two).
  bool worth(const BatchNormSplit& plan) const { return forced_ != 0 || plan.splits > 1; }

  /// batchnorm_stats' work: stats ← (mean, var); with `moving`, the moving statistics updated.
  void stats(const Tensor& x, const BatchNormShape& s, const BatchNormSplit& plan, Tensor& stats,
             Tensor* moving, float momentum);
  /// batchnorm_backward_sums' work: grads ← (dγ, dβ).
  void sums(const Tensor& x, const Tensor& dy, const BatchNormShape& s, const BatchNormSplit& plan,
            const Tensor& stats, const Tensor& params, float epsilon, Tensor& grads);

 private:
  Tensor& partials(size_t channels);  // 2·channels·most splits floats, allocated on first use
  void launch_partials(compute::kernel& k, size_t group, const BatchNormShape& s, const BatchNormSplit& plan,
                       const char* name);
  void launch_finish(compute::kernel& k, size_t group, const BatchNormShape& s, const char* name);

  Runtime& rt_;
  size_t forced_ = 0;
  size_t stats_group_ = 0, stats_finish_group_ = 0, sums_group_ = 0, sums_finish_group_ = 0;
  compute::kernel stats_, stats_finish_, sums_, sums_finish_;
  Tensor partial_;
};

}  // namespace anycl
