// The subcommand table: add a command here and in commands.hpp.
#include "commands.hpp"

namespace anycl::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"devices", "list OpenCL devices and their properties", run_devices},
      {"train", "train an MLP on an MNIST-format data set (default: the reference model on Fashion-MNIST)",
       run_train},
      {"eval", "test loss/accuracy, per-class accuracy and confusion matrix of a saved model", run_eval},
      {"predict", "predicted classes of the images in an IDX file", run_predict},
  };
  return table;
}

}  // namespace anycl::cli
