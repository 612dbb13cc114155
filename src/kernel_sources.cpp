// Chooses between the embedded kernel sources and a developer's $ANYCL_KERNEL_DIR.
#include "kernel_sources.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "anycl/error.hpp"

namespace anycl::detail {

std::vector<KernelSource> kernel_sources() {
  const char* dir = std::getenv("ANYCL_KERNEL_DIR");
  if (!dir || !*dir) return embedded_kernel_sources();
  std::vector<KernelSource> sources;
  for (const auto& embedded : embedded_kernel_sources()) {
    const std::string path = fmt::format("{}/{}.cl", dir, embedded.name);
    std::ifstream in(path, std::ios::binary);
    if (!in)
      throw ValidationError(
          fmt::format("ANYCL_KERNEL_DIR={} has no readable {}.cl ({}) — copy cl_kernels/ "
                      "there or unset ANYCL_KERNEL_DIR",
                      dir, embedded.name, path));
    std::ostringstream text;
    text << in.rdbuf();
    sources.push_back({embedded.name, text.str()});
  }
  return sources;
}

}  // namespace anycl::detail
