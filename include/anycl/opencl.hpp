// The OpenCL C API as anycl's public headers include it: an application that sets no target gets
// the 1.2 API anycl is built for (not the headers' default 3.0 and its note); one that sets its own
// CL_TARGET_OPENCL_VERSION keeps it. Nothing else is defined.
#pragma once

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <CL/cl_ext.h>
