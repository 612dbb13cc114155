// Device choice per process for data-parallel runs.
#include "anycl/dist/rank_devices.hpp"

#include <cstdlib>

#include "anycl/device.hpp"
#include "util/platform.hpp"

namespace anycl {

size_t local_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
    if (const auto v = detail::platform::get_env(name)) return std::strtoul(v->c_str(), nullptr, 10);
  return 0;
}

std::vector<std::string> process_device_specs(const std::vector<std::string>& device_specs,
                                              const std::string& device_spec) {
  if (!device_specs.empty()) return device_specs;
  if (!device_spec.empty()) return {device_spec};
  if (std::string env = device_spec_from_env(); !env.empty()) return {env};  // ANYCL_DEVICE, as elsewhere
  const auto devices = list_devices();
  const DeviceType best = select_device("").type;
  std::vector<size_t> same_kind;
  for (const auto& d : devices)
    if (d.type == best) same_kind.push_back(d.index);
  return {std::to_string(same_kind[local_rank() % same_kind.size()])};
}

}  // namespace anycl
