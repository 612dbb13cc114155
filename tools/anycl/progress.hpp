// Training output as Keras' fit prints it: a live bar with ETA and samples/s on a terminal,
// one line per epoch otherwise (or nothing with --quiet).
#pragma once

#include "anycl/train/trainer.hpp"

namespace anycl::cli {

class ProgressDisplay {
 public:
  /// `live`: redraw a bar in place (stderr is a terminal); otherwise only epoch lines.
  ProgressDisplay(bool live, bool quiet) : live_(live), quiet_(quiet) {}
  void progress(const Progress& p);
  void epoch_end(const EpochStats& s, size_t epochs);
  bool show_learning_rate = false;  // --lr-schedule: each epoch line ends with its rate

 private:
  bool live_, quiet_;
  bool bar_shown_ = false;
};

}  // namespace anycl::cli
