// `anycl bench mlp --devices LIST` and `mpirun … anycl bench mlp --distributed`: data-parallel
// training throughput beside the single-device baseline measured in the same run, the scaling
// efficiency, and one step split into compute, gradient exchange and update.
#pragma once

#include <string>
#include <vector>

namespace anycl::cli {

struct ParallelBenchOptions {
  std::vector<std::string> device_specs;  // --devices ("all" expanded); empty: one per process
  std::string device_spec;                // --device
  bool distributed = false;               // --distributed (under mpirun)
  int repeats = 3;                        // timed epochs per configuration
  std::string data_dir;
  size_t limit = 6400;  // training samples per epoch
  bool json = false;
};

/// Runs the benchmark; rank 0 alone prints (a table, or JSON). Returns the exit code.
int run_bench_parallel(const ParallelBenchOptions& options);

}  // namespace anycl::cli
