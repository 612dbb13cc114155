// Learning-rate schedules with Keras' names and formulas: ExponentialDecay, PiecewiseConstantDecay
// (step decay) and CosineDecay give the rate of each step, ReduceLROnPlateau lowers it between
// epochs. The Trainer sets the rate before each optimizer launch (a kernel argument: no wait).
//
//   TrainOptions options;
//   options.schedule = anycl::parse_schedule("exponential:decay_steps=1000,decay_rate=0.96");
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

namespace anycl {

enum class ScheduleKind {
  constant,            // the optimizer's learning rate throughout
  exponential_decay,   // Keras ExponentialDecay
  piecewise_constant,  // Keras PiecewiseConstantDecay ("step")
  cosine_decay,        // Keras CosineDecay, with its optional linear warm-up
  reduce_on_plateau,   // Keras ReduceLROnPlateau, applied at epoch ends
};

/// A schedule's settings; defaults are Keras'. Exponential and cosine decay start from the
/// optimizer's learning rate (Keras' initial_learning_rate); step decay's `values` are the rates.
/// Cosine decay with a warm-up (warmup_target > 0) rises linearly from the optimizer's rate to
/// warmup_target over warmup_steps steps, then decays from warmup_target to alpha * warmup_target
/// over decay_steps more (Keras' CosineDecay(..., warmup_target, warmup_steps)).
struct LearningRateSchedule {
  ScheduleKind kind = ScheduleKind::constant;
  double decay_steps = 0;    // exponential, cosine: > 0
  double decay_rate = 0;     // exponential: in (0, 1]
  bool staircase = false;    // exponential: decay in whole periods of decay_steps
  double alpha = 0;          // cosine: the final rate as a fraction of the first, in [0, 1]
  double warmup_target = 0;  // cosine: the rate the warm-up reaches, > 0; 0: no warm-up (Keras' None)
  double warmup_steps = 0;   // cosine: the warm-up's steps, a whole number >= 0 (unused without a target)
  std::vector<uint64_t> boundaries;  // step: strictly increasing step counts
  std::vector<float> values;         // step: boundaries.size() + 1 rates
  std::string monitor;      // plateau: "val_loss", "loss", or "" (val_loss when evaluating, else loss)
  double factor = 0.1;      // plateau: in (0, 1)
  uint64_t patience = 10;   // plateau: epochs without improvement before a reduction
  double min_delta = 1e-4;  // plateau: the least decrease that counts as improvement
  uint64_t cooldown = 0;    // plateau: epochs after a reduction before counting again
  double min_lr = 0;        // plateau: the rate is never reduced below this

  /// Cosine decay with a warm-up (warmup_target set).
  bool has_warmup() const noexcept { return kind == ScheduleKind::cosine_decay && warmup_target > 0; }
  bool operator==(const LearningRateSchedule& o) const;
  bool operator!=(const LearningRateSchedule& o) const { return !(*this == o); }
};

/// ReduceLROnPlateau's running state (kept in checkpoints, so a reduction survives a resume).
struct ScheduleState {
  float learning_rate = 0;  // plateau: the rate now in effect (0: not started, the optimizer's)
  double best = std::numeric_limits<double>::infinity();
  uint64_t wait = 0, cooldown_counter = 0;
};

/// ValidationError naming the setting (Keras' name), its value and the range it must be in.
void check_schedule(const LearningRateSchedule& schedule);

/// The rate of the step after `iteration` steps (Keras' `schedule(optimizer.iterations)`), from the
/// optimizer's rate `initial`; a plateau schedule gives state.learning_rate (or `initial` before it starts).
float scheduled_learning_rate(const LearningRateSchedule& schedule, const ScheduleState& state, float initial,
                              uint64_t iteration);

/// ReduceLROnPlateau's epoch-end rule (Keras' on_epoch_end) on the monitored value; returns true when
/// it reduced the rate. Non-plateau schedules are left alone.
bool plateau_epoch_end(const LearningRateSchedule& schedule, ScheduleState& state, float initial,
                       double value);

/// Parses the `--lr-schedule` form: KIND[:KEY=VALUE,...] with KIND exponential, step, cosine, plateau
/// or constant, e.g. "exponential:decay_steps=1000,decay_rate=0.96", "step:boundaries=1000,2000;
/// values=0.1,0.01,0.001", "cosine:decay_steps=5000,alpha=0.1[,warmup_target=0.01,warmup_steps=500]",
/// "plateau:patience=3,factor=0.5".
/// ValidationError saying what is wrong and what to write; the result is checked.
LearningRateSchedule parse_schedule(const std::string& spec);
/// The canonical text of a schedule (parse_schedule reads it back exactly); "constant" for none.
std::string schedule_text(const LearningRateSchedule& schedule);

}  // namespace anycl
