// Uploading a host split to the device once.
#include "anycl/train/device_dataset.hpp"

#include <fmt/format.h>

#include "anycl/error.hpp"

namespace anycl {
namespace {
compute::buffer upload_bytes(Runtime& rt, const std::vector<uint8_t>& bytes, const char* what) {
  if (bytes.size() > rt.info().max_alloc_bytes)
    throw ValidationError(
        fmt::format("the data set's {} need {} MiB on the device but '{}' allows {} MiB in one "
                    "buffer — use --limit to train on fewer samples",
                    what, bytes.size() >> 20, rt.info().name, rt.info().max_alloc_bytes >> 20));
  cl_int status = CL_SUCCESS;
  cl_mem mem = clCreateBuffer(rt.context().get(), CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR,
                              std::max<size_t>(bytes.size(), 1), const_cast<uint8_t*>(bytes.data()), &status);
  detail::check_cl(status, "clCreateBuffer", fmt::format("data set {} ({} bytes)", what, bytes.size()));
  return compute::buffer(mem, false);
}
}  // namespace

DeviceDataset::DeviceDataset(Runtime& rt, const data::Dataset& host)
    : count_(host.count),
      features_(host.features()),
      num_classes_(host.num_classes),
      images_(upload_bytes(rt, host.pixels, "images")),
      labels_(upload_bytes(rt, host.labels, "labels")),
      host_labels_(host.labels) {
  if (count_ == 0) throw ValidationError("the data set is empty");
}

}  // namespace anycl
