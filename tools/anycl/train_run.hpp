// `anycl train` after its flags are parsed: one path for one device, several devices
// (--devices) and MPI processes (--distributed), all through the library's one training loop.
#pragma once

#include <set>
#include <string>
#include <vector>

#include "anycl/data/dataset.hpp"
#include "anycl/nn/model_from_flags.hpp"
#include "anycl/nn/sequential.hpp"
#include "anycl/optim/optimizer.hpp"
#include "anycl/train/trainer.hpp"
#include "train_split.hpp"

namespace anycl::cli {

/// What the train command parsed.
struct TrainRequest {
  std::vector<std::string> device_specs;  // from --devices ("all" expanded); empty: --device or best
  std::string device_spec;                // --device, else $ANYCL_DEVICE, else "" (best)
  bool device_from_flag = false;          // --device given (for messages)
  bool distributed = false;               // --distributed (under mpirun)
  std::string data_dir;                   // --data; "" for the default
  data::LoadOptions load;
  TrainOptions train;
  OptimizerConfig optimizer;
  ModelFlags model;  // --layers, --activation, --init, --dropout
  bool quiet = false;
  bool autotune = true;  // first-use tuning where the device has none (--no-autotune: off)
  std::string save_path, metrics_path, plot_path;
  std::string profile_path;     // --profile: Chrome trace JSON of the device timeline
  SplitFlag split;              // --split: equal (default), auto or weights
  std::string checkpoint_dir;   // --checkpoint; "" for none
  std::string resume;           // --resume DIR or FILE; "" for a new run
  std::set<std::string> given;  // the flags the user typed (a resumed run keeps the others' recorded values)
};

/// Parses --devices: "all" or comma-separated device specs (indices, names, …).
std::vector<std::string> parse_device_list(const std::string& text);

/// Runs the training `request` describes; rank 0 alone prints and writes files. Returns the exit code.
int run_training(TrainRequest request);

}  // namespace anycl::cli
