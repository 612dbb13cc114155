// The subcommand table: add a command here and in commands.hpp.
#include "commands.hpp"

namespace anycl::cli {

const std::vector<Command>& commands() {
  static const std::vector<Command> table = {
      {"devices", "list OpenCL devices and their properties", run_devices},
      {"train", "train a model on an MNIST-format data set (default: the reference model on Fashion-MNIST)",
       run_train},
      {"eval", "test loss/accuracy, per-class accuracy and confusion matrix of a saved model", run_eval},
      {"predict", "predicted classes of the images in an IDX file", run_predict},
      {"bench", "GEMM, bandwidth, latency and training-step figures beside host OpenBLAS", run_bench},
      {"tune", "tune CLBlast's GEMM for this device and store the parameters (--show, --reset)", run_tune},
      {"plot", "learning curves (loss and accuracy per epoch) from a metrics file, as SVG", run_plot},
      {"export", "write a saved model in another format (ONNX)", run_export},
      {"doctor", "check the OpenCL set-up, data, cache and tuning folders; say what to fix", run_doctor},
      {"cache", "the compiled-kernel cache: info, clear, warm (compile ahead of time)", run_cache},
  };
  return table;
}

}  // namespace anycl::cli
