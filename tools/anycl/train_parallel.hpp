// `anycl train --devices LIST` and `mpirun … anycl train --distributed`: the data-parallel
// paths of the train command (replicas on several devices and/or MPI processes).
#pragma once

#include <string>
#include <vector>

#include "anycl/data/dataset.hpp"
#include "anycl/nn/model_from_flags.hpp"
#include "anycl/nn/sequential.hpp"
#include "anycl/optim/optimizer.hpp"
#include "anycl/train/trainer.hpp"
#include "train_split.hpp"

namespace anycl::cli {

/// What the train command parsed, as the data-parallel path needs it.
struct ParallelTrainRequest {
  std::vector<std::string> device_specs;  // from --devices ("all" expanded); empty: one per process
  std::string device_spec;                // --device (MPI: the same for every rank) or ""
  bool distributed = false;               // --distributed (under mpirun)
  std::string data_dir;
  data::LoadOptions load;
  TrainOptions train;
  OptimizerConfig optimizer;
  ModelFlags model;  // --layers, --activation, --init, --dropout
  bool quiet = false;
  std::string save_path, metrics_path, plot_path;
  SplitFlag split;                     // --split: equal (default), auto or weights
  std::string checkpoint_dir;          // --checkpoint (set by --resume too); "" for none
  bool resume = false;                 // --resume: continue from checkpoint_dir's checkpoint
  std::vector<std::string> arguments;  // the resolved command line, recorded in checkpoints
};

/// Parses --devices: "all" or comma-separated device specs (indices, names, …).
std::vector<std::string> parse_device_list(const std::string& text);

/// Runs data-parallel training; rank 0 alone prints and writes files. Returns the exit code.
int train_data_parallel(const ParallelTrainRequest& request);

}  // namespace anycl::cli
