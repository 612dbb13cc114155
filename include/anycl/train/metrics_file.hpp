// Per-epoch metrics as CSV (run.csv) or JSON Lines (run.jsonl), one row per epoch with
// self-explaining column names, flushed as each epoch ends.
#pragma once

#include <fstream>
#include <string>

#include "anycl/train/trainer.hpp"

namespace anycl {

class MetricsFile {
 public:
  /// Opens `path` for writing; the format follows the extension (.csv or .jsonl). Throws
  /// ValidationError for another extension and Error when the file cannot be created.
  explicit MetricsFile(const std::string& path);
  /// Appends one epoch's row (the header comes with the first row).
  void write(const EpochStats& stats);

 private:
  std::string path_;
  bool jsonl_;
  bool header_written_ = false;
  std::ofstream out_;
};

}  // namespace anycl
