// The process-wide lock over CLBlast's parameters (clblast_params_lock.hpp).
#include "blas/clblast_params_lock.hpp"

#include <atomic>
#include <cstdint>

#include "anycl/error.hpp"
#include "blas/clblast_params.hpp"

namespace anycl::detail {
namespace {

std::atomic<uint64_t> generation{1};

std::shared_mutex& params_mutex() {
  static std::shared_mutex m;
  return m;
}

// What this thread holds: a second shared lock could wait behind a waiting writer (a deadlock), and a
// thread holding the exclusive one must not wait for itself.
thread_local int uses_held = 0;
thread_local int changes_held = 0;

}  // namespace

uint64_t clblast_params_generation() { return generation.load(std::memory_order_acquire); }

void note_clblast_params_changed() { generation.fetch_add(1, std::memory_order_acq_rel); }

ClblastParamsUse::ClblastParamsUse() {
  if (uses_held == 0 && changes_held == 0) lock_ = std::shared_lock<std::shared_mutex>(params_mutex());
  ++uses_held;
}

ClblastParamsUse::~ClblastParamsUse() { --uses_held; }

ClblastParamsChange::ClblastParamsChange() {
  if (changes_held == 0) {
    if (uses_held > 0)
      throw Error("internal error: CLBlast's parameters changed inside a CLBlast call on the same thread");
    lock_ = std::unique_lock<std::shared_mutex>(params_mutex());
  }
  ++changes_held;
}

ClblastParamsChange::~ClblastParamsChange() { --changes_held; }

}  // namespace anycl::detail
