#include "bench_startup.hpp"

#include <fmt/format.h>

#include <filesystem>
#include <regex>

#include "anycl/error.hpp"
#include "child_process.hpp"
#include "util/platform.hpp"

namespace anycl::cli {
namespace {

struct Startup {
  double data = 0, runtime = 0, training = 0, first_step = 0;
};

// Runs `anycl train --max-steps 1` with its caches in `cache_dir` and reads its start-up line.
Startup run_child(const DeviceInfo& device, const std::string& data_dir, const std::string& cache_dir) {
  const std::filesystem::path cache(cache_dir);
  ProcessSpec child;
  child.args = {this_executable(), "train",
                "--max-steps",     "1",
                "--epochs",        "1",
                "--limit",         "1280",
                "--device",        std::to_string(device.index)};
  if (!data_dir.empty()) child.args.insert(child.args.end(), {"--data", data_dir});
  child.env = {{"ANYCL_CACHE_DIR", (cache / "anycl").string()},
               {"POCL_CACHE_DIR", (cache / "pocl").string()},
               {"CUDA_CACHE_PATH", (cache / "cuda").string()}};
  std::string output;
  const ChildExit status = run_captured(child, output);
  static const std::regex line(
      R"(first training step finished ([0-9.]+) s after the process started \(data loaded at ([0-9.]+) s, )"
      R"(runtime ready at ([0-9.]+) s, training started at ([0-9.]+) s\))");
  std::smatch m;
  if (!status.ok() || !std::regex_search(output, m, line))
    throw Error(fmt::format("bench startup: `anycl train --max-steps 1` failed ({}):\n{}", status.describe(),
                            output));
  return {std::stod(m[2]), std::stod(m[3]), std::stod(m[4]), std::stod(m[1])};
}

std::vector<Cell> row(const std::string& label, const Startup& s) {
  return {Cell::str(label), Cell::num(s.data, 3), Cell::num(s.runtime, 3), Cell::num(s.training, 3),
          Cell::num(s.first_step, 3)};
}

}  // namespace

Table bench_startup(const DeviceInfo& device, const std::string& data_dir, int repeats) {
  const std::string dir = (std::filesystem::temp_directory_path() /
                           fmt::format("anycl-bench-startup-{}", detail::platform::process_id()))
                              .string();
  std::error_code ignored;
  std::filesystem::remove_all(dir, ignored);
  Table t;
  t.name = "startup";
  t.title = "Process start → first finished training step (anycl train --max-steps 1), seconds";
  t.columns = {"caches", "data loaded", "runtime ready", "training starts", "first step done"};
  try {
    t.rows.push_back(row("cold (anycl + driver caches empty)", run_child(device, data_dir, dir)));
    std::vector<Startup> warm;
    for (int r = 0; r < repeats; ++r) warm.push_back(run_child(device, data_dir, dir));
    auto med = [&](double Startup::*field) {
      std::vector<double> v;
      for (const auto& s : warm) v.push_back(s.*field);
      return median(v);
    };
    t.rows.push_back(row(
        fmt::format("warm (median of {})", repeats),
        {med(&Startup::data), med(&Startup::runtime), med(&Startup::training), med(&Startup::first_step)}));
  } catch (...) {
    std::filesystem::remove_all(dir, ignored);
    throw;
  }
  std::filesystem::remove_all(dir, ignored);
  t.notes = {
      "times from the kernel's process start time, so loading shared libraries counts",
      "data: reading and checking the IDX files; runtime: OpenCL context and anycl's kernels (built or "
      "read from the cache); training starts after the upload, model set-up and CLBlast warm-up",
      "a cold start applies no `anycl tune` file: its cache folder is new"};
  return t;
}

}  // namespace anycl::cli
