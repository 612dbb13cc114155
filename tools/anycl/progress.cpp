// Progress bar and epoch lines.
#include "progress.hpp"

#include <fmt/format.h>

namespace anycl::cli {

void ProgressDisplay::progress(const Progress& p) {
  if (quiet_ || !live_) return;
  constexpr size_t kWidth = 28;
  const size_t filled = p.steps ? p.step * kWidth / p.steps : 0;
  std::string bar(filled, '=');
  if (filled < kWidth) bar += '>' + std::string(kWidth - filled - 1, '.');
  const double rate = p.seconds > 0 ? double(p.samples) / p.seconds : 0;
  const double eta = p.step ? p.seconds / double(p.step) * double(p.steps - p.step) : 0;
  fmt::print(stderr,
             "\rEpoch {}/{} {}/{} [{}] ETA {:.0f}s - {:.0f} samples/s - loss: {:.4f} - acc: {:.4f}\033[K",
             p.epoch, p.epochs, p.step, p.steps, bar, eta, rate, p.loss, p.accuracy);
  bar_shown_ = true;
}

void ProgressDisplay::epoch_end(const EpochStats& s, size_t epochs) {
  if (quiet_) return;
  if (bar_shown_) fmt::print(stderr, "\r\033[K");
  bar_shown_ = false;
  std::string line =
      fmt::format("Epoch {}/{} - {} steps - {:.1f}s - {:.0f} samples/s - loss: {:.4f} - acc: {:.4f}", s.epoch,
                  epochs, s.steps, s.seconds, s.samples_per_second, s.train_loss, s.train_accuracy);
  if (s.has_eval)
    line += fmt::format(" - {0}_loss: {1:.4f} - {0}_acc: {2:.4f}", s.eval_name, s.eval.loss, s.eval.accuracy);
  if (show_learning_rate) line += fmt::format(" - lr: {:.6g}", s.learning_rate);
  fmt::print("{}\n", line);
  std::fflush(stdout);
}

}  // namespace anycl::cli
