// The training loop's checkpoints: one format whatever the number of replicas. Rank 0 writes; on
// resume every process reads the file and the processes agree (through the collective's sum) that
// they all read the same checkpoint before any of them changes its state, so a missing or
// different file fails every process instead of hanging the others in the next all-reduce.
#include <fmt/format.h>

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
  return c;
}

void Trainer::save_checkpoint(const std::string& path) {
  const Checkpoint c = checkpoint();
  if (collective_->rank() == 0) write_checkpoint(path, c);
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
  for (auto& r : replicas_) detail::restore_model_state(c, r->model(), r->optimizer());
  steps_done_ = c.steps_done;
  epoch_ = c.epoch;
  step_ = c.step_in_epoch;
  train_count_ = c.train_count;
  num_classes_ = c.model.num_classes;
  restored_metrics_ = c.epoch_metrics;
  history_ = c.history;
}

}  // namespace anycl
