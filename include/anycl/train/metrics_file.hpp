// Per-epoch metrics as CSV (run.csv) or JSON Lines (run.jsonl), one row per epoch with
// self-explaining column names. The file is replaced atomically as each epoch ends, so a run that
// fails before its first epoch never costs the previous file, and a reader never sees half a row.
#pragma once

#include <string>

#include "anycl/train/trainer.hpp"

namespace anycl {

class MetricsFile {
 public:
  /// Checks `path` as an output (nothing is written yet); the format follows the extension (.csv or
  /// .jsonl). Throws ValidationError for another extension and Error for a path that cannot be
  /// written (missing folder, not a regular file).
  explicit MetricsFile(const std::string& path);
  /// Adds one epoch's row (the header comes with the first) and replaces the file with all rows so far.
  void write(const EpochStats& stats);

 private:
  std::string path_;
  bool jsonl_;
  bool header_written_ = false;
  std::string text_;
};

}  // namespace anycl
