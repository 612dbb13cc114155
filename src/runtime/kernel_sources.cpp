// Chooses between the embedded kernel sources and a developer's $ANYCL_KERNEL_DIR.
#include "runtime/kernel_sources.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <utility>

#include "anycl/error.hpp"
#include "anycl/util/bounded_read.hpp"
#include "util/platform.hpp"

namespace anycl::detail {

std::vector<KernelSource> kernel_sources() {
  const std::string dir = platform::get_env("ANYCL_KERNEL_DIR").value_or("");
  if (dir.empty()) return embedded_kernel_sources();
  std::vector<KernelSource> sources;
  for (const auto& embedded : embedded_kernel_sources()) {
    const std::string path = fmt::format("{}/{}.cl", dir, embedded.name);
    std::string text;
    try {  // a regular file of sane size: a FIFO or device here is refused, not waited on
      text = read_text_file_bounded(path, kMaxTextFileBytes, "kernel source");
    } catch (const DataError& e) {
      throw ValidationError(
          fmt::format("ANYCL_KERNEL_DIR={} has no readable {}.cl ({}) — copy cl_kernels/ "
                      "there or unset ANYCL_KERNEL_DIR",
                      dir, embedded.name, e.what()));
    }
    sources.push_back({embedded.name, std::move(text)});
  }
  return sources;
}

}  // namespace anycl::detail
