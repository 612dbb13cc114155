// The OpenCL C sources of cl_kernels/, embedded at build time by cmake/embed_kernels.cmake,
// or read from $ANYCL_KERNEL_DIR when a developer sets it.
#pragma once

#include <string>
#include <vector>

namespace anycl::detail {

struct KernelSource {
  std::string name;    // file name without .cl
  std::string source;  // file contents
};

/// The sources compiled into the library (generated table).
const std::vector<KernelSource>& embedded_kernel_sources();
/// The embedded sources, or the same file names read from $ANYCL_KERNEL_DIR when it is set.
std::vector<KernelSource> kernel_sources();

}  // namespace anycl::detail
