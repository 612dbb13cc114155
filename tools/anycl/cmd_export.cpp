// `anycl export`: a saved model (.anycl) in another format. ONNX needs a build with
// ANYCL_WITH_ONNX (protobuf and the onnx.proto schema).
#include <fmt/format.h>

#include "anycl/error.hpp"
#include "anycl/train/model_file.hpp"
#include "anycl/util/atomic_file.hpp"
#include "args.hpp"
#include "commands.hpp"
#ifdef ANYCL_WITH_ONNX
#include "anycl/export/onnx.hpp"
#endif

namespace anycl::cli {
namespace {

constexpr const char* kUsage =
    "usage: anycl export --model M.anycl --onnx OUT.onnx\n"
    "  Writes the model as an ONNX graph (opset 13): Gemm + activation per dense layer, Softmax at\n"
    "  the end. Input 'input': float (batch, features), pixels / 255; output 'probabilities':\n"
    "  float (batch, classes). The batch dimension is dynamic.\n"
    "  --model FILE   a model saved by `anycl train --save`\n"
    "  --onnx FILE    the ONNX file to write\n";

}  // namespace

int run_export(int argc, char** argv) {
  const Args args(argc, argv, 2, {"--model", "--onnx"}, {"--help"});
  if (args.has("--help")) return fmt::print("{}", kUsage), 0;
  if (!args.positional().empty()) throw UsageError("unexpected argument '" + args.positional().front() + "'");
  const std::string model_path = args.get("--model"), onnx_path = args.get("--onnx");
  if (model_path.empty())
    throw UsageError("--model M.anycl is required (write one with `anycl train --save`)");
  if (onnx_path.empty()) throw UsageError("--onnx OUT.onnx is required: the format and file to write");
  check_output_is_not_input(model_path, onnx_path);
  check_output_file(onnx_path);  // before any work: a bad output path is reported first
#ifdef ANYCL_WITH_ONNX
  const SavedModel model = read_model(model_path);
  export_onnx(model, onnx_path);
  fmt::print("wrote {} (ONNX opset {}, input 'input' (batch, {}), output 'probabilities')\n", onnx_path,
             kOnnxOpset, model.spec.input_features);
  return 0;
#else
  throw Error(
      "this anycl was built without ONNX export — install protobuf and the ONNX schema (Debian: apt-get "
      "install "
      "libprotobuf-dev protobuf-compiler libonnx-dev) and rebuild with -DANYCL_WITH_ONNX=ON");
#endif
}

}  // namespace anycl::cli
