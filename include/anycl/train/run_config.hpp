// What a training run was started with, beyond the model and optimizer: the data it reads and
// how the batch is split. Stored in checkpoints as typed fields, so a resumed run reads the same
// data — and never any output path or flag: those come from the user's own command line.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace anycl {

struct RunConfig {
  std::string data_dir;              // the data set folder, as resolved when the run started ("" if none)
  size_t limit = 0;                  // first `limit` training samples (0: all)
  double validation_split = 0;       // last fraction held out for validation
  size_t num_classes = 0;            // classes stated by the user (0: from the labels)
  std::vector<double> shares;        // data-parallel batch shares per replica of the world (empty: equal)
  std::vector<std::string> devices;  // the device specs this process trained on (as given)
  size_t processes = 1;              // MPI processes the run was spread over
  size_t epochs = 0;                 // the run's epoch target (TrainOptions::epochs, filled by the trainer)
  size_t checkpoint_every = 0;       // TrainOptions::checkpoint_every, filled by the trainer
};

}  // namespace anycl
