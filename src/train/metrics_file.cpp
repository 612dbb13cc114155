// CSV / JSON Lines metrics rows.
#include "anycl/train/metrics_file.hpp"

#include <fmt/format.h>

#include "anycl/error.hpp"
#include "anycl/util/atomic_file.hpp"

namespace anycl {
namespace {
bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}
}  // namespace

MetricsFile::MetricsFile(const std::string& path) : path_(path), jsonl_(ends_with(path, ".jsonl")) {
  if (!jsonl_ && !ends_with(path, ".csv"))
    throw ValidationError(fmt::format("metrics file '{}' must end in .csv or .jsonl", path));
  check_output_file(path);
}

void MetricsFile::write(const EpochStats& s) {
  const std::string e = s.has_eval ? s.eval_name : "test";
  if (jsonl_) {
    text_ += fmt::format("{{\"epoch\": {}, \"train_loss\": {:.6f}, \"train_acc\": {:.6f}", s.epoch,
                         s.train_loss, s.train_accuracy);
    if (s.has_eval)
      text_ += fmt::format(", \"{0}_loss\": {1:.6f}, \"{0}_acc\": {2:.6f}", e, s.eval.loss, s.eval.accuracy);
    text_ +=
        fmt::format(", \"seconds\": {:.3f}, \"samples_per_s\": {:.1f}}}\n", s.seconds, s.samples_per_second);
  } else {
    if (!header_written_)
      text_ +=
          (s.has_eval ? fmt::format("epoch,train_loss,train_acc,{0}_loss,{0}_acc,seconds,samples_per_s\n", e)
                      : "epoch,train_loss,train_acc,seconds,samples_per_s\n");
    text_ += fmt::format("{},{:.6f},{:.6f}", s.epoch, s.train_loss, s.train_accuracy);
    if (s.has_eval) text_ += fmt::format(",{:.6f},{:.6f}", s.eval.loss, s.eval.accuracy);
    text_ += fmt::format(",{:.3f},{:.1f}\n", s.seconds, s.samples_per_second);
  }
  header_written_ = true;
  write_file_atomically(path_, text_);
}

}  // namespace anycl
