// The training loop's checkpoints: one format whatever the number of replicas. Rank 0 writes; on
// resume every process reads the file and the processes agree (through the collective's sum) that
// they all read the same checkpoint before any of them changes its state, so a missing or
// different file fails every process instead of hanging the others in the next all-reduce.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "anycl/dist/replica.hpp"
#include "anycl/error.hpp"
#include "anycl/train/checkpoint.hpp"
#include "anycl/train/trainer.hpp"
#include "train/checkpoint_state.hpp"

namespace anycl {
namespace {

// The checkpoint's checksum as four 16-bit parts, and their squares: the sums over processes
// equal world × one's own for every part exactly when all processes hold the same value.
std::vector<double> fingerprint(const Checkpoint& c) {
  const std::vector<unsigned char> bytes = encode_checkpoint(c);
  uint64_t checksum = 0;
  for (size_t i = 0; i < 8; ++i) checksum |= uint64_t(bytes[bytes.size() - 8 + i]) << (8 * i);
  std::vector<double> parts;
  for (int i = 0; i < 4; ++i) {
    const double part = double((checksum >> (16 * i)) & 0xffff);
    parts.push_back(part);
    parts.push_back(part * part);
  }
  return parts;
}

}  // namespace

Checkpoint Trainer::checkpoint() {
  Checkpoint c;
  c.epoch_metrics = global_slots(step_);
  c.steps_done = steps_done_;
  c.epoch = epoch_;
  c.step_in_epoch = step_;
  detail::capture_model_state(c, replicas_[0]->model(), replicas_[0]->optimizer(), options_, num_classes_);
  c.train_count = train_count_ ? train_count_ : 1;
  c.history = history_;
  c.run = options_.run;
  c.run.epochs = options_.epochs;
  c.run.checkpoint_every = options_.checkpoint_every;
  if (options_.schedule.kind != ScheduleKind::constant) {  // the rate a schedule starts from, and its state
    c.learning_rate = initial_lr_;
    c.schedule = options_.schedule;
    c.schedule_state = schedule_state_;
  }
  return c;
}

// A checkpoint is kept only when the run is healthy: finite (checkpoint() throws otherwise) and
// with no loss explosion. The weights about to be kept are probed on the last batch (dropout off)
// and compared with the lowest mean loss this run has seen (per-step losses between checkpoints,
// and earlier probes): more than ten times that, plus one, and the run stops before it overwrites
// the last healthy checkpoint with weights no smaller learning rate can recover from.
void Trainer::check_health(const Checkpoint& c) {
  double loss = 0, rows = 0;
  for (size_t s = window_start_; s < c.step_in_epoch; ++s) {
    loss += c.epoch_metrics[2 * s];
    rows += double(std::min(options_.batch, train_count_ - s * options_.batch));
  }
  if (rows > 0 && (best_window_loss_ < 0 || loss / rows < best_window_loss_)) best_window_loss_ = loss / rows;
  window_start_ = c.step_in_epoch;
  std::vector<double> probe = {0.0, 0.0};
  for (auto& r : replicas_) {
    const auto [l, n] = r->probe_last_batch();
    probe[0] += l, probe[1] += n;
  }
  collective_->sum(probe);
  if (probe[1] == 0) return;  // no step yet
  const double mean = probe[0] / probe[1];
  if (!std::isfinite(mean) || (best_window_loss_ >= 0 && mean > 10 * best_window_loss_ + 1))
    throw NumericalError(fmt::format(
        "training diverged by epoch {}, step {} (global step {}): the loss of the weights reached {:.4g}, "
        "against {:.4g} earlier in this run — {}; lower the learning rate (now {:g})",
        c.epoch + 1, c.step_in_epoch, c.steps_done, mean, best_window_loss_,
        last_healthy_.empty() ? "no checkpoint was written by this run"
                              : "the last healthy checkpoint is kept (" + last_healthy_ + ")",
        replicas_[0]->optimizer().learning_rate()));
  if (best_window_loss_ < 0 || mean < best_window_loss_) best_window_loss_ = mean;
}

void Trainer::save_checkpoint(const std::string& path) {
  const Checkpoint c = checkpoint();
  check_health(c);
  if (collective_->rank() == 0) write_checkpoint(path, c);
  last_healthy_ = c.step_in_epoch ? fmt::format("epoch {}, step {}", c.epoch + 1, c.step_in_epoch)
                                  : fmt::format("end of epoch {}", c.epoch);
}

void Trainer::resume_from(const std::string& path) {
  Checkpoint c;
  std::string error;
  try {
    c = read_checkpoint(path);
  } catch (const Error& e) {
    error = e.what();
  }
  // [0]: processes that failed to read; then the fingerprint (zeros where the read failed; one
  // process alone has nobody to compare with).
  const int world = collective_->size();
  std::vector<double> votes(1, error.empty() ? 0.0 : 1.0);
  const std::vector<double> mine = error.empty() && world > 1 ? fingerprint(c) : std::vector<double>(8, 0.0);
  votes.insert(votes.end(), mine.begin(), mine.end());
  collective_->sum(votes);
  if (!error.empty())
    throw DataError(world == 1 ? error : fmt::format("rank {}: {}", collective_->rank(), error));
  if (votes[0] > 0)
    throw DataError(fmt::format(
        "checkpoint '{}' could not be read by {} of {} processes — put it where every process can read it "
        "(e.g. a shared folder) and resume again",
        path, votes[0], world));
  for (size_t i = 0; i < mine.size(); ++i)
    if (votes[i + 1] != double(world) * mine[i])
      throw DataError(fmt::format(
          "the processes read different checkpoints from '{}' — give every process the same checkpoint "
          "(e.g. from a shared folder) and resume again",
          path));
  resume_from(c);
}

void Trainer::resume_from(const Checkpoint& c) {
  for (auto& r : replicas_) detail::check_resumable(c, r->model(), r->optimizer(), options_);
  if (c.schedule != options_.schedule)
    throw ValidationError(fmt::format(
        "the checkpoint was written with the learning-rate schedule {} but this run has {} — resume with the "
        "same schedule",
        schedule_text(c.schedule), schedule_text(options_.schedule)));
  for (auto& r : replicas_) detail::restore_model_state(c, r->model(), r->optimizer());
  steps_done_ = c.steps_done;
  epoch_ = c.epoch;
  step_ = c.step_in_epoch;
  train_count_ = c.train_count;
  num_classes_ = c.model.num_classes;
  restored_metrics_ = c.epoch_metrics;
  history_ = c.history;
  schedule_state_ = c.schedule_state;
  // A resumed run given another starting rate (e.g. lower after a divergence) restarts the plateau's rate
  // there.
  if (c.learning_rate != initial_lr_) schedule_state_.learning_rate = 0;
}

}  // namespace anycl
