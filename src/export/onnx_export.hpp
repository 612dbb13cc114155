// ONNX export of a saved MLP: Gemm (+ activation) per Dense layer, Dropout dropped (identity at
// inference), Softmax at the end; opset 13, a dynamic batch dimension. Built with protobuf from
// the onnx.proto schema (ANYCL_WITH_ONNX); private to the anycl command.
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

/// The ONNX ModelProto of `model`, serialised. ValidationError for a layer ONNX export cannot map.
std::string onnx_model_bytes(const SavedModel& model, const OnnxExportOptions& options = {});
/// Writes onnx_model_bytes() to `path` atomically; Error naming the path when it cannot.
void export_onnx(const SavedModel& model, const std::string& path, const OnnxExportOptions& options = {});

}  // namespace anycl
