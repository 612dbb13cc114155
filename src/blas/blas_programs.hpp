// CLBlast keeps every program it compiled in a process-wide cache keyed by context, each holding a
// reference to its context. The GEMM layer empties it when the last Runtime goes (through this
// hook: the runtime is core and does not link CLBlast), so contexts do not live until exit, where
// library teardown order can crash a driver (seen with Oclgrind).
#pragma once

namespace anycl::detail {

using LastRuntimeHook = void (*)() noexcept;
/// Called when the last live Runtime is destroyed (null when the GEMM layer is not linked).
LastRuntimeHook& last_runtime_hook();
/// Installs the GEMM layer's hook (CLBlast's ClearCache); called by blas.cpp's static initialiser.
bool install_release_clblast_programs_hook();

}  // namespace anycl::detail
