// `anycl bench startup`: process start → first finished training step, measured by running
// `anycl train --max-steps 1` as a child process with cold caches (a fresh anycl kernel cache and
// a fresh driver cache) and then warm ones.
#pragma once

#include <string>

#include "anycl/device.hpp"
#include "bench_table.hpp"

namespace anycl::cli {

/// One cold start, then `repeats` warm starts (median), on `device`, training on `data_dir`.
Table bench_startup(const DeviceInfo& device, const std::string& data_dir, int repeats);

}  // namespace anycl::cli
