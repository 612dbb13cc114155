// Minimal: Oclgrind --uninitialized after clEnqueueWriteBuffer at a non-zero offset.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
static const char* src =
    "__kernel void add1(__global float* y, const uint off) {"
    "  const size_t i = get_global_id(0); y[off + i] = y[off + i] + 1.0f; }";
int main(int argc, char** argv) {
  const unsigned off = argc > 1 ? (unsigned)(argv[1][0] - '0') : 0;
  cl_platform_id p;
  cl_device_id d;
  cl_int e;
  clGetPlatformIDs(1, &p, NULL);
  clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL);
  cl_context c = clCreateContext(NULL, 1, &d, NULL, NULL, &e);
  cl_command_queue q = clCreateCommandQueue(c, d, 0, &e);
  cl_program prog = clCreateProgramWithSource(c, 1, &src, NULL, &e);
  clBuildProgram(prog, 1, &d, "", NULL, NULL);
  cl_kernel k = clCreateKernel(prog, "add1", &e);
  float host[4] = {1, 2, 3, 4};
  cl_mem y = clCreateBuffer(c, CL_MEM_READ_WRITE, 8 * sizeof(float), NULL, &e);
  clEnqueueWriteBuffer(q, y, CL_TRUE, off * sizeof(float), sizeof host, host, 0, NULL, NULL);
  size_t n = 4;
  clSetKernelArg(k, 0, sizeof y, &y);
  clSetKernelArg(k, 1, sizeof off, &off);
  clEnqueueNDRangeKernel(q, k, 1, NULL, &n, NULL, 0, NULL, NULL);
  clEnqueueReadBuffer(q, y, CL_TRUE, off * sizeof(float), sizeof host, host, 0, NULL, NULL);
  printf("offset %u: %g %g %g %g\n", off, host[0], host[1], host[2], host[3]);
  return 0;
}
