// CLBlast keeps one set of kernel parameters per device for the whole process, not per runtime: a
// tuning applied on one Runtime, or a set some products run with (XgemmSetScope), is what
// every Runtime on that device runs next. These locks keep each CLBlast call on one set from the
// first parameter it reads to its enqueue, and keep one thread's temporary set (the dW set, a tuning
// being applied) from other threads' calls: a call waits while another thread changes the parameters
// and runs on the set that is there before or after, never on the dW set of another thread's layer,
// and never sees the size of its temporary and the kernel it runs disagree.
//
// Both are re-entrant on one thread: a call inside a change (the dW GEMM in its scope) or inside
// another call (a GEMM split in two) takes nothing more. Taking a change while the thread holds a use
// is a programming error and throws.
#pragma once

#include <mutex>
#include <shared_mutex>

namespace anycl::detail {

/// Held across one CLBlast call, or a read of CLBlast's parameters that lays calls out.
class ClblastParamsUse {
 public:
  ClblastParamsUse();
  ~ClblastParamsUse();
  ClblastParamsUse(const ClblastParamsUse&) = delete;
  ClblastParamsUse& operator=(const ClblastParamsUse&) = delete;

 private:
  std::shared_lock<std::shared_mutex> lock_;
};

/// Held while this thread changes CLBlast's parameters and for as long as it runs on the changed ones.
class ClblastParamsChange {
 public:
  ClblastParamsChange();
  ~ClblastParamsChange();
  ClblastParamsChange(const ClblastParamsChange&) = delete;
  ClblastParamsChange& operator=(const ClblastParamsChange&) = delete;

 private:
  std::unique_lock<std::shared_mutex> lock_;
};

}  // namespace anycl::detail
