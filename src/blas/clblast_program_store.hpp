// CLBlast compiles each routine's program from source once per process; its cache lives in memory
// only. Where the driver keeps no cache of its own that costs every start: Intel's CPU runtime takes
// 2.8 s to compile the GEMM program and 0.01 s to load its binary. These keep the binaries of the
// routines anycl calls in anycl's kernel cache and hand them back to CLBlast in the next process
// (through clblast_binary_cache.hpp), so a warm start loads instead of compiling.
//
// Each binary is filed under CLBlast's own name for the program (routine, kernels and every
// parameter value) with the device's hash (platform, device, driver), CLBLAST_BUILD_OPTIONS and the
// CLBlast library file, so a change of any of them compiles afresh; a kept binary is built on the
// device before CLBlast is given it. With the kernel cache off ($ANYCL_CACHE=off) or CLBlast's cache
// out of reach, nothing happens and CLBlast compiles as before.
#pragma once

#include <cstddef>
#include <string>

#include "anycl/opencl.hpp"

namespace anycl {
class Runtime;
}

namespace anycl::detail {

/// Gives CLBlast the binaries kept for `rt`'s device at CLBlast's current parameters, so its first
/// call of each routine loads one instead of compiling. Call once the parameters are settled.
/// Returns how many it gave.
size_t restore_clblast_programs(Runtime& rt) noexcept;
/// Keeps in the kernel cache the binaries CLBlast holds for `rt`'s device at its current
/// parameters that are not kept yet. Returns how many it wrote.
size_t keep_clblast_programs(Runtime& rt) noexcept;
/// Empties CLBlast's caches of binaries and programs, and forgets which entries this process kept or
/// restored: for a binary the driver refused when CLBlast built it (Intel's CPU runtime has refused, as
/// CL_INVALID_BINARY, a kept binary it had built an instant before in the same process). CLBlast's next
/// call compiles from source, and keep_clblast_programs then replaces the kept entry that differs.
void forget_clblast_binaries() noexcept;
/// CLBlast's name for `routine`'s program ("GEMM", "GEMMSTRIDEDBATCHED", "CONVGEMM", "OMATCOPY") at
/// its current parameters on `rt`'s device, e.g. "GEMM_Copy_32_16_8_2_Pad_…"; "" for another routine.
std::string clblast_program_name(Runtime& rt, const std::string& routine);
/// The device name CLBlast files binaries under.
std::string clblast_device_name(cl_device_id device);

}  // namespace anycl::detail
