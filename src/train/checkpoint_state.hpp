// A checkpoint's model part — weights, optimizer state and the settings a run must keep —
// captured from and restored into a model and its optimizer (the training loop's checkpoints).
#pragma once

#include "anycl/train/checkpoint.hpp"

namespace anycl::detail {

/// Fills the model, optimizer, seed and batch fields of `c` (blocking downloads). `c`'s position
/// fields (epoch, step_in_epoch, steps_done) name the place in the NumericalError thrown when the
/// weights or the optimizer state are NaN or infinite.
void capture_model_state(Checkpoint& c, Sequential& model, Optimizer& optimizer, const TrainOptions& options,
                         size_t num_classes);
/// ValidationError naming the difference unless `c` was written for this architecture, optimizer,
/// batch and seed.
void check_resumable(const Checkpoint& c, const Sequential& model, Optimizer& optimizer,
                     const TrainOptions& options);
/// Uploads the checkpoint's weights and optimizer state and sets the optimizer's step count
/// (after check_resumable).
void restore_model_state(const Checkpoint& c, Sequential& model, Optimizer& optimizer);

}  // namespace anycl::detail
