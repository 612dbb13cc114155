// Measuring tuning candidates in child processes (`anycl tune --measure`): a driver that crashes
// compiling or running one parameter set costs that candidate, not the tuning run.
#pragma once

#include <string>
#include <vector>

#include "anycl/blas/tuning.hpp"
#include "anycl/device.hpp"

namespace anycl::cli {

/// A CandidateMeasurer that runs `anycl tune --measure` children on `device`, reading their results
/// as they come; a child killed by a signal other than SIGINT/SIGTERM marks the candidate it was
/// on as failed and a new child goes on with the rest. `stop` (may be null) ends the measuring.
CandidateMeasurer child_measurer(const DeviceInfo& device, const std::vector<GemmShape>& shapes,
                                 const std::atomic<bool>* stop);

/// The child side: measures the candidates in `in` on `device` and appends a line per candidate to
/// `out` ("start I", then "result I SECONDS EXACT ERROR…").
int run_measure_worker(const DeviceInfo& device, const std::string& in, const std::string& out);

/// Shapes as one flag value ("NN128x512x784/fwd 1;…") and back; UsageError on bad text.
std::string format_shapes(const std::vector<GemmShape>& shapes);
std::vector<GemmShape> parse_shapes(const std::string& text);

}  // namespace anycl::cli
