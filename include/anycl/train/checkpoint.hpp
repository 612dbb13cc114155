// Training checkpoints (.anyclckpt): everything a Trainer needs to continue a run so that it
// matches an uninterrupted one bit for bit — weights, optimizer state, the step counters that
// drive the counter-based RNG and the data order, and the partial metrics of the epoch in
// progress. Versioned little-endian format with a checksum (docs/checkpoint-format.md), written
// atomically so the previous checkpoint survives any crash.
//
//   trainer.save_checkpoint("run/checkpoint.anyclckpt");   // between steps, e.g. from a callback
//   trainer.resume_from("run/checkpoint.anyclckpt");       // then fit() continues where it stopped
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "anycl/train/model_file.hpp"
#include "anycl/train/trainer.hpp"

namespace anycl {

/// The newest checkpoint format version this build reads and writes: 2 when the run has a
/// learning-rate schedule (so an older anycl refuses it rather than resuming at the wrong rate), 3 when
/// that schedule has a cosine warm-up (which version-2 readers do not know), else 1.
inline constexpr uint32_t kCheckpointFormatVersion = 3;

/// A checkpoint's contents.
struct Checkpoint {
  SavedModel model;                                 // architecture and weights (a model file inside)
  std::string optimizer;                            // Optimizer::name()
  float learning_rate = 0;                          // the optimizer's rate (a schedule's start)
  uint64_t optimizer_iterations = 0;                // Optimizer::iterations()
  std::vector<std::vector<float>> optimizer_state;  // Optimizer::state(), in order
  uint64_t seed = 0;                                // TrainOptions::seed (weights, dropout, data order)
  size_t batch = 0;                                 // TrainOptions::batch
  uint64_t steps_done = 0;                          // global step counter (the dropout RNG's counter)
  size_t epoch = 0;                                 // epochs completed (0-based index of the one in progress)
  size_t step_in_epoch = 0;                         // steps of that epoch done (position in its data order)
  size_t train_count = 0;                           // training samples per epoch
  std::vector<float> epoch_metrics;                 // (loss sum, correct) per step done in this epoch
  std::vector<EpochStats> history;                  // completed epochs
  RunConfig run;                                    // the data and batch split the run was started with
  std::string app;                                  // opaque text of the application's own (anycl's CLI
                                                    // writes none; format-1 files of older versions
                                                    // hold their flags here, read for the data fields only)
  LearningRateSchedule schedule;                    // TrainOptions::schedule (constant in version-1 files)
  ScheduleState schedule_state;                     // ReduceLROnPlateau's state
};

/// The bytes of a checkpoint file.
std::vector<unsigned char> encode_checkpoint(const Checkpoint& checkpoint);
/// Validates and decodes checkpoint bytes; DataError naming `path` and the fault otherwise.
Checkpoint decode_checkpoint(const std::string& path, const std::vector<unsigned char>& bytes);
/// Writes a checkpoint atomically (temporary file, fsync, rename, fsync of the folder).
void write_checkpoint(const std::string& path, const Checkpoint& checkpoint);
/// Reads and validates a checkpoint file.
Checkpoint read_checkpoint(const std::string& path);

}  // namespace anycl
