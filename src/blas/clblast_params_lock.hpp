// CLBlast keeps one set of kernel parameters per device for the whole process, not per runtime: a
// tuning applied on one Runtime, or a convolution's weight-gradient set (ConvDwGemmScope), is what
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

#include <cstdint>
#include <mutex>
#include <shared_mutex>

namespace anycl::detail {

/// How many times CLBlast's parameters were changed in this process so far (clblast_params.hpp's
/// override counts each): a runtime's GEMM layout read at one count is read again at another, so a
/// tuning applied on another Runtime, or a dW scope, never leaves a runtime laying calls out for a set
/// CLBlast no longer runs.
uint64_t clblast_params_generation();
/// Counts a change (called after every override, under ClblastParamsChange).
void note_clblast_params_changed();

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
