// Minimal: does Oclgrind's --uninitialized see clEnqueueFillBuffer / clEnqueueWriteBuffer data as written?
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <string.h>
static const char* src =
    "__kernel void copy(__global const float* in, __global float* out) {"
    "  const size_t i = get_global_id(0); out[i] = in[i] + 1.0f; }";
int main(int argc, char** argv) {
  const int mode = argc > 1 ? argv[1][0] - '0' : 0;  // 0 fill, 1 write, 2 nothing
  cl_platform_id p;
  cl_device_id d;
  cl_int e;
  clGetPlatformIDs(1, &p, NULL);
  clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL);
  cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
  cl_command_queue q = clCreateCommandQueue(c, d, 0, &e);
  cl_program prog = clCreateProgramWithSource(c, 1, &src, NULL, &e);
  clBuildProgram(prog, 1, &d, "", NULL, NULL);
  cl_kernel k = clCreateKernel(prog, "copy", &e);
  float host[4] = {1, 2, 3, 4}, v = 5.f;
  cl_mem in = clCreateBuffer(c, CL_MEM_READ_WRITE, sizeof host, NULL, &e);
  cl_mem out = clCreateBuffer(c, CL_MEM_READ_WRITE, sizeof host, NULL, &e);
  if (mode == 0) clEnqueueFillBuffer(q, in, &v, sizeof v, 0, sizeof host, 0, NULL, NULL);
  if (mode == 1) clEnqueueWriteBuffer(q, in, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL);
  size_t n = 4;
  clSetKernelArg(k, 0, sizeof in, &in);
  clSetKernelArg(k, 1, sizeof out, &out);
  clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, NULL);
  clEnqueueReadBuffer(q, out, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL);
  printf("mode %d: %g %g %g %g\n", mode, host[0], host[1], host[2], host[3]);
  return 0;
}
