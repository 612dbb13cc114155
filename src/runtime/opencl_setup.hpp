// OpenCL's one-time set-up, made safe for threads and processes: the ICD loader and drivers
// initialise on the first platform query and are not safe when several threads make it at once,
// and a child forked after that inherits none of the driver's threads (its calls would hang).
#pragma once

#include <mutex>

namespace anycl::detail {

/// The process-wide set-up lock itself (for the teardown of the last runtime, which must not run
/// beside another runtime's start).
std::recursive_mutex& opencl_setup_mutex();
/// Holds the process-wide lock that device discovery and runtime start-up run under (recursive:
/// start-up discovers). Throws UnsupportedError in a child forked after OpenCL was first used.
std::unique_lock<std::recursive_mutex> lock_opencl_setup();

/// Throws UnsupportedError naming `call`, the cause and the fix when this process is a child
/// forked after OpenCL was used (in it or in its parent); else nothing.
void check_not_forked_after_opencl(const char* call);

}  // namespace anycl::detail
