// Measuring tuning candidates in child processes of anycl's worker program (anycl-tune-worker
// measure …): a driver that crashes compiling or running one parameter set costs that candidate,
// not the tuning run or the application that asked for it.
#pragma once

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "anycl/blas/tuning.hpp"
#include "anycl/device.hpp"
#include "util/process.hpp"

namespace anycl::detail {

/// A CandidateMeasurer that runs `worker measure …` children on `device`, reading their results as
/// they come; a child killed by a signal other than SIGINT/SIGTERM marks the candidate it was on
/// as failed and a new child goes on with the rest. When `stopped()` turns true the child is asked
/// to stop (SIGINT) and measuring ends.
CandidateMeasurer child_measurer(const std::string& worker, const DeviceInfo& device,
                                 const std::vector<GemmShape>& shapes, std::function<bool()> stopped);

/// The child side: measures the candidates in `in` on `device` and appends a line per candidate to
/// `out` ("start I", then "result I SECONDS EXACT ERROR…").
int run_measure_worker(const DeviceInfo& device, const std::string& in, const std::string& out);

/// A fresh private folder (POSIX mode 0700) in the system's temporary folder for files handed to a
/// child; removed with its contents when the object dies.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

/// "exit code 3" or "killed by SIGSEGV".
std::string describe_exit(const platform::ProcessExit& exit);

}  // namespace anycl::detail
