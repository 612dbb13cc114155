// Minimal: Oclgrind 21.10 --uninitialized keeps a released buffer's shadow for the next buffer given
// the same slot. `small` (4 floats) is filled and released; `big` (16 floats) takes its slot, is
// filled whole by a kernel, and copied: with argument 1, elements 4…15 are reported uninitialised
// (12 reports, "written to global memory" in copy); with 0 (no small buffer first), none. With 2,
// as 1 but `big` is never filled: 12 reports where 16 elements are uninitialised (0…3 inherit the
// small buffer's "written" state).
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
static const char* src =
    "__kernel void fill(__global float* y) { y[get_global_id(0)] = 1.0f; }"
    "__kernel void copy(__global const float* x, __global float* y) {"
    "  const size_t i = get_global_id(0); y[i] = x[i]; }";
static void run(cl_command_queue q, cl_kernel k, cl_mem a, cl_mem b, size_t n) {
  clSetKernelArg(k, 0, sizeof a, &a);
  if (b) clSetKernelArg(k, 1, sizeof b, &b);
  clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, NULL);
}
int main(int argc, char** argv) {
  const int mode = argc > 1 ? argv[1][0] - '0' : 1, reuse = mode != 0;
  cl_platform_id p;
  cl_device_id d;
  cl_int e;
  clGetPlatformIDs(1, &p, NULL);
  clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL);
  cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
  cl_command_queue q = clCreateCommandQueue(c, d, 0, &e);
  cl_program prog = clCreateProgramWithSource(c, 1, &src, NULL, &e);
  clBuildProgram(prog, 1, &d, "", NULL, NULL);
  cl_kernel fill = clCreateKernel(prog, "fill", &e), copy = clCreateKernel(prog, "copy", &e);
  if (reuse) {
    cl_mem small = clCreateBuffer(c, CL_MEM_READ_WRITE, 4 * sizeof(float), NULL, &e);
    run(q, fill, small, NULL, 4);
    clFinish(q);
    clReleaseMemObject(small);  // its slot is free again; Oclgrind's shadow of it stays
  }
  cl_mem big = clCreateBuffer(c, CL_MEM_READ_WRITE, 16 * sizeof(float), NULL, &e);
  cl_mem out = clCreateBuffer(c, CL_MEM_READ_WRITE, 16 * sizeof(float), NULL, &e);
  if (mode != 2) run(q, fill, big, NULL, 16);  // writes all 16 floats
  run(q, copy, big, out, 16);                  // reads all 16: 4…15 "uninitialised" after reuse
  float host[16];
  clEnqueueReadBuffer(q, out, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL);
  float sum = 0;
  for (int i = 0; i < 16; ++i) sum += host[i];
  printf("mode %d: sum %g\n", mode, sum);
  return 0;
}
