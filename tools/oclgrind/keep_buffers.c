// Preloaded ahead of Oclgrind's runtime for tools/run-oclgrind.sh's uninitialised-value pass only:
// clReleaseMemObject keeps the object, so Oclgrind never hands a released buffer's slot (and its
// stale shadow, slot_reuse_repro.c) to a new buffer. Every buffer then starts fully uninitialised.
// The memory of a short run stays small; the races/API gate runs without it.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>

CL_API_ENTRY cl_int CL_API_CALL clReleaseMemObject(cl_mem memobj) {
  return memobj ? CL_SUCCESS : CL_INVALID_MEM_OBJECT;
}
