// The seam between the runtime (core, no CLBlast) and the GEMM layer: at start-up a Runtime asks
// the hook, when one is installed, to apply the parameters `anycl tune` stored for its device.
#pragma once

#include <functional>
#include <string>

namespace anycl {
class Runtime;
namespace detail {

class DiskCache;

/// Applies the stored tuning for `rt`'s device (log lines through `log`); returns the file applied,
/// empty when none. Throws DataError for an intact file whose parameters compute wrong results.
using StoredTuningHook = std::string (*)(Runtime& rt, const DiskCache* cache,
                                         const std::function<void(const std::string&)>& log);
/// The installed hook (null when the GEMM layer is not linked); the GEMM layer sets it once, before
/// main().
StoredTuningHook& stored_tuning_hook();
/// Installs the GEMM layer's hook (stored_tuning.cpp); called once by blas.cpp's static initialiser,
/// so that any program that links gemm() applies stored tunings.
bool install_stored_tuning_hook();

}  // namespace detail
}  // namespace anycl
