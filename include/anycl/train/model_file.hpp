// Model files (.anycl): architecture, weights and a checksum in a versioned little-endian
// format (docs/model-format.md). Written atomically; read with every field validated.
#pragma once

#include <string>
#include <vector>

#include "anycl/nn/sequential.hpp"

namespace anycl {

/// The newest format version this build reads. It writes version 1 for softmax cross-entropy
/// models (byte-identical to earlier releases) and version 2, which adds a `loss` line, otherwise.
inline constexpr uint32_t kModelFormatVersion = 3;

/// A model file's contents.
struct SavedModel {
  ModelSpec spec;
  size_t num_classes = 0;
  std::vector<float> parameters;  // Sequential::parameters() layout
};

/// Writes the built model's architecture and current weights to `path` (atomically).
void save_model(const std::string& path, Sequential& model, size_t num_classes);
/// Reads and validates a model file; DataError naming the file and the fault otherwise.
SavedModel read_model(const std::string& path);
/// The bytes of a model file (what save_model writes) for `spec` and `params`.
std::vector<unsigned char> encode_model(const ModelSpec& spec, size_t num_classes,
                                        const std::vector<float>& params);
/// Validates and decodes model-file bytes; `path` names them in messages (read_model's core).
SavedModel decode_model(const std::string& path, const std::vector<unsigned char>& bytes);
/// A model built on `rt` for batches up to `max_batch`, holding the saved weights.
std::unique_ptr<Sequential> instantiate(const SavedModel& saved, Runtime& rt, size_t max_batch);

}  // namespace anycl
