// Learning curves: per-epoch loss and accuracy (train and test/val) read from a metrics file or
// a training history, drawn as a standalone two-panel SVG that a browser opens as it is.
#pragma once

#include <string>
#include <vector>

#include "anycl/train/trainer.hpp"

namespace anycl::cli {

/// One line of a panel: e.g. "train" or "test", a value per epoch.
struct Curve {
  std::string name;
  std::vector<double> epochs, values;
};

/// The two panels' series.
struct LearningCurves {
  std::vector<Curve> loss, accuracy;
};

/// Reads a metrics file written by `anycl train --metrics` (.csv or .jsonl): every column named
/// NAME_loss or NAME_acc becomes the curve NAME. DataError naming the file and line otherwise.
LearningCurves read_learning_curves(const std::string& path);
/// As read_learning_curves, from the file's text (`path` names it in messages and picks the format).
LearningCurves parse_learning_curves(const std::string& text, const std::string& path);
/// The curves of a training history (what Trainer::fit returns).
LearningCurves learning_curves(const std::vector<EpochStats>& history);
/// A standalone SVG document: loss (left) and accuracy (right) against epochs, with axes, ticks,
/// labels and a legend. ValidationError when there is nothing to draw.
std::string render_learning_curves_svg(const LearningCurves& curves, const std::string& title);
/// Renders and writes `path` (atomically replacing it); Error naming the file when it cannot.
void write_learning_curves_svg(const std::string& path, const LearningCurves& curves,
                               const std::string& title);

}  // namespace anycl::cli
