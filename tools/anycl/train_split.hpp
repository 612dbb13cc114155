// --split for data-parallel training: equal shares of every batch (the default), explicit
// weights W1:W2:…, or `auto` (measured device speeds, printed so a run can be repeated exactly).
#pragma once

#include <string>
#include <vector>

#include "anycl/data/dataset.hpp"
#include "anycl/dist/collective.hpp"
#include "anycl/nn/sequential.hpp"
#include "anycl/runtime.hpp"

namespace anycl::cli {

struct SplitFlag {
  bool automatic = false;       // --split auto
  std::vector<double> weights;  // --split W1:W2:…; empty for equal and auto
};

/// Parses --split: "equal", "auto" or positive numbers separated by ':'. UsageError otherwise.
SplitFlag parse_split(const std::string& text);

/// UsageError unless explicit weights number one per local device (the same on every process) or
/// one per replica of the world (processes × local devices).
void check_split_count(const SplitFlag& split, size_t local_devices, size_t processes);

/// "0.5123:0.4877": each share to 4 significant digits, which parse_split reads back exactly.
std::string format_split(const std::vector<double>& shares);

/// The shares to train with: {} (equal), the explicit weights, or measured speeds rounded as
/// format_split prints them (so `--split PRINTED` repeats the run bit for bit). `note` gets a line
/// saying what was used. With `collective` every process must call it; all get the same shares.
std::vector<double> resolve_split(const SplitFlag& split, const std::vector<Runtime*>& runtimes,
                                  const ModelSpec& spec, const data::Dataset& train, size_t batch,
                                  Collective* collective, std::string& note);

}  // namespace anycl::cli
