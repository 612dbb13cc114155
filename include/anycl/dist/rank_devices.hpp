// Which devices this process trains on in data-parallel runs (`anycl train` and `anycl bench mlp`
// with --devices / --distributed): the listed ones, or under MPI one per node-local rank.
#pragma once

#include <string>
#include <vector>

namespace anycl {

/// The rank's index among the processes on its node (Open MPI, MPICH/Slurm variables; 0 if none).
size_t local_rank();

/// `device_specs` (from --devices) if given, else {device_spec} (--device) if given, else
/// $ANYCL_DEVICE if set, else the node-local rank's device among this node's devices of the best kind.
std::vector<std::string> process_device_specs(const std::vector<std::string>& device_specs,
                                              const std::string& device_spec);

}  // namespace anycl
