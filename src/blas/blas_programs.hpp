// CLBlast keeps every program it compiled in a process-wide cache keyed by context, each holding a
// reference to its context. The GEMM layer empties it when the last Runtime goes (through this
// hook: the runtime is core and does not link CLBlast), so contexts do not live until exit, where
// library teardown order can crash a driver (seen with Oclgrind).
#pragma once

namespace anycl::detail {

using LastRuntimeHook = void (*)(bool last) noexcept;
/// Called when a Runtime is destroyed, `last` when no other is live (null when the GEMM layer is not
/// linked): the last empties all of CLBlast's caches, another its programs only (each holds its
/// context alive: without this, a process that keeps one runtime and makes and destroys others grew
/// by ~2.5 MiB a cycle; the binaries stay, so live runtimes build again without compiling).
LastRuntimeHook& last_runtime_hook();
/// Installs the GEMM layer's hook (CLBlast's ClearCache); called by blas.cpp's static initialiser.
bool install_release_clblast_programs_hook();

}  // namespace anycl::detail
