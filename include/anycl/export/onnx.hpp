// ONNX export of a saved model: Gemm (+ activation) per Dense layer, Conv/MaxPool/Flatten for image
// layers, Dropout dropped (identity at inference), Softmax at the end for a classifier; opset 13, a
// dynamic batch dimension. Public C++ API (the C API's anycl_model_export_onnx); built with protobuf
// from the onnx.proto schema (ANYCL_WITH_ONNX) — without it, both calls throw UnsupportedError.
#pragma once

#include <string>

#include "anycl/train/model_file.hpp"

namespace anycl {

/// ONNX graph settings; the names are the graph's input and output names.
struct OnnxExportOptions {
  std::string input_name = "input";           // float (batch, features), pixels scaled to [0, 1]
  std::string output_name = "probabilities";  // float (batch, classes), softmax of the logits
  std::string graph_name = "anycl_mlp";
};

/// The opset the graph declares.
inline constexpr int kOnnxOpset = 13;

/// The ONNX ModelProto of `model` (read_model()'s result), serialised. ValidationError for a layer
/// ONNX export cannot map; UnsupportedError in a build without ONNX export.
std::string onnx_model_bytes(const SavedModel& model, const OnnxExportOptions& options = {});
/// Writes onnx_model_bytes() to `path` atomically; IoError naming the path when it cannot.
void export_onnx(const SavedModel& model, const std::string& path, const OnnxExportOptions& options = {});

}  // namespace anycl
