// An LD_PRELOAD shim that counts clEnqueueNDRangeKernel calls — anycl's and CLBlast's — and
// forwards each to the real OpenCL loader. `anycl bench mlp` reads the count through
// anycl_cl_launch_count(); at exit the total goes to stderr. Used by tools/count-launches.sh.
#include <CL/cl.h>
#include <dlfcn.h>

#include <atomic>
#include <cstdio>

namespace {
std::atomic<unsigned long long> g_launches{0};

struct Report {
  ~Report() {
    std::fprintf(stderr, "launch counter: %llu clEnqueueNDRangeKernel calls\n", g_launches.load());
  }
} g_report;

using EnqueueFn = cl_int (*)(cl_command_queue, cl_kernel, cl_uint, const size_t*, const size_t*,
                             const size_t*, cl_uint, const cl_event*, cl_event*);
}  // namespace

extern "C" {

__attribute__((visibility("default"))) unsigned long long anycl_cl_launch_count() {
  return g_launches.load();
}

__attribute__((visibility("default"))) cl_int clEnqueueNDRangeKernel(
    cl_command_queue queue, cl_kernel kernel, cl_uint dims, const size_t* offset, const size_t* global,
    const size_t* local, cl_uint num_events, const cl_event* wait_list, cl_event* event) {
  static const auto real = reinterpret_cast<EnqueueFn>(dlsym(RTLD_NEXT, "clEnqueueNDRangeKernel"));
  if (!real) return CL_INVALID_OPERATION;
  ++g_launches;
  return real(queue, kernel, dims, offset, global, local, num_events, wait_list, event);
}
}
