// Which form of BatchNorm's per-channel reductions the layers built in a scope get: one work-group a
// channel as the lane-strided (GPU-like) or the row (PoCL's CPU driver, Runtime::row_kernels) walk, or
// split over `splits` groups a channel (GPUs: RuntimeImpl::split_reductions), so that every form
// runs on the CPU runtimes here. BatchNormOp reads the settings when a layer is built.
#pragma once

#include <anycl/runtime.hpp>

#include <string>

#include "runtime/runtime_impl.hpp"

namespace anycl::test {

struct BatchNormReduction {
  bool rows = false;
  size_t splits = 0;       // 0: one group a channel; else the split form with this many groups a channel
  bool automatic = false;  // the split form cut as on a GPU (from the shape and the compute units)
  std::string name() const {
    if (automatic) return "split, automatic";
    return splits ? "split over " + std::to_string(splits) : rows ? "one group, rows" : "one group";
  }
};

// The forms every BatchNorm test runs over: 3 and 7 groups a channel leave shares that do not divide
// the tests' batch·plane evenly.
inline const BatchNormReduction kBatchNormReductions[] = {{false, 0}, {true, 0}, {false, 3}, {false, 7}};

class BatchNormForm {
 public:
  BatchNormForm(Runtime& rt, const BatchNormReduction& form)
      : rt_(rt),
        impl_(detail::RuntimeImpl::of(rt)),
        rows_(rt.row_kernels()),
        split_(impl_.split_reductions),
        forced_(impl_.forced_splits) {
    rt.set_row_kernels(form.rows);
    impl_.split_reductions = form.splits != 0 || form.automatic;
    impl_.forced_splits = form.splits;
  }
  ~BatchNormForm() {
    rt_.set_row_kernels(rows_);
    impl_.split_reductions = split_;
    impl_.forced_splits = forced_;
  }
  BatchNormForm(const BatchNormForm&) = delete;
  BatchNormForm& operator=(const BatchNormForm&) = delete;

 private:
  Runtime& rt_;
  detail::RuntimeImpl& impl_;
  bool rows_, split_;
  size_t forced_;
};

}  // namespace anycl::test
