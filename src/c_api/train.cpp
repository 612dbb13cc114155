// Training through the C API: the library's one training loop (the Trainer, built from the model's
// spec exactly as `anycl train` builds it, so the same flags and seed give the same losses), with
// the caller's callbacks able to stop it after the current step.
#include <fmt/format.h>

#include <atomic>
#include <cstddef>
#include <cstring>
#include <filesystem>
#include <vector>

#include "anycl/error.hpp"
#include "anycl/train/trainer.hpp"
#include "c_api/contract.hpp"
#include "c_api/handles.hpp"

using namespace anycl::detail::c_api;

namespace {

// anycl_train_options and anycl_epoch as API version 1 laid them out: a caller built against that
// header passes the one and receives the other in `history` (the epoch callback's pointer may point
// at the longer struct: such a caller reads its first fields only).
struct TrainOptionsV1 {
  size_t struct_size, epochs, batch;
  const char* optimizer;
  float lr;
  uint64_t seed;
  double validation_split;
  const char* checkpoint_dir;
  double progress_interval_s;
  anycl_progress_callback on_progress;
  anycl_epoch_callback on_epoch;
  void* user;
};
struct EpochV1 {
  size_t epoch;
  double loss, accuracy;
  int has_validation;
  double val_loss, val_accuracy, seconds;
};
static_assert(sizeof(TrainOptionsV1) <= offsetof(anycl_train_options, lr_schedule), "version 1 is a prefix");
// API version 2 ended with the schedule fields; version 3 appended resume_from, version 4 the
// cosine warm-up (warmup_target, warmup_steps).
constexpr size_t kTrainOptionsV2 = offsetof(anycl_train_options, resume_from);
constexpr size_t kTrainOptionsV3 = offsetof(anycl_train_options, warmup_target);
static_assert(sizeof(EpochV1) <= offsetof(anycl_epoch, learning_rate), "version 1 is a prefix");

// The schedule fields (API version 2, and 4's warm-up) as the Trainer's schedule, checked in the C
// API's words.
anycl::LearningRateSchedule schedule_from(const anycl_train_options& o) {
  anycl::LearningRateSchedule s;
  if (o.struct_size < kTrainOptionsV2) return s;
  if (o.struct_size >= sizeof(anycl_train_options)) {
    check_finite_option("anycl_train", "options.warmup_target", o.warmup_target);
    check_finite_option("anycl_train", "options.warmup_steps", o.warmup_steps);
    s.warmup_target = o.warmup_target;
    s.warmup_steps = o.warmup_steps;
  }
  const std::string kind = o.lr_schedule ? o.lr_schedule : "";
  if (kind.empty() && (s.warmup_target != 0 || s.warmup_steps != 0))
    throw anycl::ValidationError(fmt::format(
        "anycl_train: options.{} is {} but options.lr_schedule is NULL (a constant rate) — a warm-up is "
        "CosineDecay's: pass lr_schedule \"cosine\" with decay_steps, or leave warmup_target and "
        "warmup_steps 0",
        s.warmup_target != 0 ? "warmup_target" : "warmup_steps",
        s.warmup_target != 0 ? s.warmup_target : s.warmup_steps));
  if (kind.empty()) return s;
  if (kind == "exponential")
    s.kind = anycl::ScheduleKind::exponential_decay;
  else if (kind == "step")
    s.kind = anycl::ScheduleKind::piecewise_constant;
  else if (kind == "cosine")
    s.kind = anycl::ScheduleKind::cosine_decay;
  else if (kind == "plateau")
    s.kind = anycl::ScheduleKind::reduce_on_plateau;
  else if (kind != "constant")
    throw anycl::ValidationError(
        fmt::format("anycl_train: options.lr_schedule is '{}' — pass \"exponential\", \"step\", \"cosine\", "
                    "\"plateau\", or NULL for a constant rate",
                    kind));
  for (const auto& [what, value] : {std::pair{"options.decay_steps", o.decay_steps},
                                    {"options.decay_rate", o.decay_rate},
                                    {"options.alpha", o.alpha},
                                    {"options.factor", o.factor},
                                    {"options.min_delta", o.min_delta},
                                    {"options.min_lr", o.min_lr}})
    check_finite_option("anycl_train", what, value);
  s.decay_steps = o.decay_steps;
  s.decay_rate = o.decay_rate;
  s.staircase = o.staircase != 0;
  s.alpha = o.alpha;
  if (s.kind == anycl::ScheduleKind::piecewise_constant) {
    if (o.boundary_count && (!o.boundaries || !o.values))
      throw anycl::ValidationError(fmt::format(
          "anycl_train: options.boundary_count is {} but options.{} is NULL — pass {} boundaries and {} "
          "values",
          o.boundary_count, o.boundaries ? "values" : "boundaries", o.boundary_count, o.boundary_count + 1));
    s.boundaries.assign(o.boundaries, o.boundaries + o.boundary_count);
    s.values.assign(o.values, o.values + (o.boundary_count ? o.boundary_count + 1 : 0));
    for (size_t i = 0; i < s.values.size(); ++i)
      check_finite_option("anycl_train", fmt::format("options.values[{}]", i).c_str(), s.values[i]);
  }
  s.monitor = o.monitor ? o.monitor : "";
  s.factor = o.factor;
  s.patience = o.patience;
  s.min_delta = o.min_delta;
  s.cooldown = o.cooldown;
  s.min_lr = o.min_lr;
  try {
    anycl::check_schedule(s);
  } catch (const anycl::ValidationError& e) {
    throw anycl::ValidationError(fmt::format("anycl_train: options.{}", e.what()));
  }
  return s;
}

// Keras' validation split: the last fraction of `train` moves into the returned set.
anycl::data::Dataset split_tail(anycl::data::Dataset& train, double fraction) {
  if (!(fraction >= 0.0 && fraction < 1.0))
    throw anycl::ValidationError(fmt::format(
        "anycl_train: validation_split {} is outside [0, 1) — pass e.g. 0.1 or 0 for none", fraction));
  const size_t split_at = static_cast<size_t>(static_cast<double>(train.count) * (1.0 - fraction));
  if (split_at == 0 || split_at == train.count)
    throw anycl::ValidationError(
        fmt::format("anycl_train: a validation split of {} of {} samples leaves {} — pass a fraction that "
                    "keeps samples on both sides",
                    fraction, train.count, split_at == 0 ? "none to train on" : "none to validate on"));
  anycl::data::Dataset tail = train;
  auto cut = [&](auto& head_part, auto& tail_part, size_t width) {
    if (head_part.empty()) return;
    tail_part.erase(tail_part.begin(), tail_part.begin() + static_cast<std::ptrdiff_t>(split_at * width));
    head_part.resize(split_at * width);
  };
  const size_t f = train.features();
  cut(train.pixels, tail.pixels, f);
  cut(train.values, tail.values, f);
  cut(train.labels, tail.labels, 1);
  cut(train.classes, tail.classes, 1);
  cut(train.targets, tail.targets, train.target_width);
  tail.count = train.count - split_at;
  train.count = split_at;
  return tail;
}

// A data set the model cannot train or validate on, in the C API's words (the C++ layers below would
// name C++ calls): the loss against the kind of targets, and the sizes per sample.
void check_data(const anycl_model& model, const anycl::data::Dataset& d, const char* which) {
  const std::string& loss = model.saved.spec.loss;
  const bool targets = d.target_width > 0;
  if (targets && loss == "softmax_cross_entropy")
    throw anycl::ValidationError(fmt::format(
        "anycl_train: the {} data set holds float targets but the model is a classifier (loss "
        "softmax_cross_entropy) — for regression create the model with options.loss = \"mse\"; for "
        "classes create the data set with anycl_dataset_create_classes",
        which));
  if (!targets && loss == "mse")
    throw anycl::ValidationError(fmt::format(
        "anycl_train: the {} data set holds class labels but the model is a regressor (loss mse) — "
        "for classes create the model with options.loss = \"softmax_cross_entropy\" (the default); for "
        "regression create the data set with anycl_dataset_create_targets",
        which));
  const size_t inputs = model.saved.spec.input_features;
  if (inputs && d.features() != inputs)
    throw anycl::ValidationError(
        fmt::format("anycl_train: the {} data set has {} features per sample but the model takes {} "
                    "(options.input_shape) — create the data set with features = {}",
                    which, d.features(), inputs, inputs));
}

anycl_epoch to_c(const anycl::EpochStats& s) {
  anycl_epoch e{};
  e.epoch = s.epoch;
  e.loss = s.train_loss;
  e.accuracy = s.train_accuracy;
  e.has_validation = s.has_eval ? 1 : 0;
  e.val_loss = s.eval.loss;
  e.val_accuracy = s.eval.accuracy;
  e.seconds = s.seconds;
  e.learning_rate = s.learning_rate;
  return e;
}

// Epoch `i` into the caller's history array, laid out as the caller's header has anycl_epoch.
void put_epoch(anycl_epoch* history, size_t i, const anycl_epoch& e, size_t options_size) {
  if (options_size == sizeof(TrainOptionsV1)) {
    EpochV1 v1;
    std::memcpy(&v1, &e, sizeof v1);  // version 1 is anycl_epoch's prefix
    reinterpret_cast<EpochV1*>(static_cast<void*>(history))[i] = v1;
  } else {
    history[i] = e;
  }
}

// The trainer's current weights become the model's host copy (its device copy is rebuilt on use).
void take_weights(anycl_model& model, anycl::Trainer& trainer) {
  model.saved.parameters = trainer.model().download_weights();
  model.has_weights = true;
  model.forget_built();
}

// The model's weights at the start of a training call, put back when the call fails.
class WeightsBefore {
 public:
  explicit WeightsBefore(const anycl_model& model)
      : parameters_(model.saved.parameters), had_weights_(model.has_weights) {}
  void restore(anycl_model& model) const {
    model.saved.parameters = parameters_;
    model.has_weights = had_weights_;
    model.forget_built();
  }

 private:
  std::vector<float> parameters_;
  bool had_weights_;
};

// Marks a model as training for the life of one anycl_train call.
class TrainingFlag {
 public:
  explicit TrainingFlag(anycl_model& model) : model_(model) { model_.training = true; }
  ~TrainingFlag() { model_.training = false; }
  TrainingFlag(const TrainingFlag&) = delete;
  TrainingFlag& operator=(const TrainingFlag&) = delete;

 private:
  anycl_model& model_;
};

anycl::TrainOptions train_options(const anycl_train_options& o) {
  check_struct_size("anycl_train", o.struct_size, {sizeof(TrainOptionsV1), kTrainOptionsV2, kTrainOptionsV3},
                    sizeof(anycl_train_options), "anycl_train_options_init");
  check_finite_option("anycl_train", "options.lr", o.lr);
  check_finite_option("anycl_train", "options.validation_split", o.validation_split);
  check_finite_option("anycl_train", "options.progress_interval_s", o.progress_interval_s);
  if (o.epochs == 0) throw anycl::ValidationError("anycl_train: epochs is 0 — pass at least 1");
  if (o.batch == 0) throw anycl::ValidationError("anycl_train: batch is 0 — pass at least 1 (e.g. 128)");
  anycl::TrainOptions t;
  t.epochs = o.epochs;
  t.batch = o.batch;
  t.seed = o.seed;
  t.run.validation_split = o.validation_split;
  t.progress_interval_s = o.on_progress ? std::max(o.progress_interval_s, 0.0) : 0.0;
  if (o.on_progress && t.progress_interval_s == 0.0) t.progress_interval_s = 0.25;
  if (o.checkpoint_dir && *o.checkpoint_dir) {
    std::error_code ec;
    std::filesystem::create_directories(o.checkpoint_dir, ec);
    if (ec)
      throw anycl::IoError(
          fmt::format("anycl_train: cannot create the checkpoint folder '{}': {} — choose a "
                      "writable folder",
                      o.checkpoint_dir, ec.message()));
    t.checkpoint_path =
        std::string(o.checkpoint_dir) + "/checkpoint.anyclckpt";  // as `anycl train --checkpoint`
  }
  t.schedule = schedule_from(o);
  return t;
}

// options.resume_from (API version 3) applied to the trainer: its checkpoint file, or the one a run
// with that checkpoint_dir writes; errors in the C API's words, of the kind the trainer gave.
void resume(anycl::Trainer& trainer, const anycl_train_options& o) {
  if (o.struct_size < kTrainOptionsV3 || !o.resume_from || !*o.resume_from) return;
  std::string path = o.resume_from;
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) path += "/checkpoint.anyclckpt";  // as checkpoint_dir writes
  auto words = [&](const std::exception& e) {
    return fmt::format("anycl_train: options.resume_from '{}': {}", o.resume_from, e.what());
  };
  try {
    trainer.resume_from(path);
  } catch (const anycl::ValidationError& e) {
    throw anycl::ValidationError(words(e));
  } catch (const anycl::DataError& e) {
    throw anycl::DataError(words(e));
  }
}

}  // namespace

extern "C" {

void anycl_train_options_init(anycl_train_options* options) {
  if (!options) return;
  *options = anycl_train_options{};
  options->struct_size = sizeof(anycl_train_options);
  options->epochs = 20;
  options->batch = 128;
  options->optimizer = "rmsprop";
  options->seed = 1;
  options->factor = 0.1;  // ReduceLROnPlateau's defaults, as Keras'
  options->patience = 10;
  options->min_delta = 1e-4;
}

anycl_status anycl_train(anycl_model* model, anycl_runtime* runtime, const anycl_dataset* train,
                         const anycl_dataset* validation, const anycl_train_options* options,
                         anycl_epoch* history, size_t history_capacity, size_t* epochs_done, int* stopped) {
  const char* call = "anycl_train";
  return guarded([&] {
    if (epochs_done) *epochs_done = 0;
    if (stopped) *stopped = 0;
    require(model, call, "model");
    require(runtime, call, "runtime");
    require(train, call, "train");
    require(options, call, "options");
    // As every call's buffers: a capacity promises a buffer (NULL history goes with capacity 0).
    if (!history && history_capacity != 0)
      throw anycl::ValidationError(
          fmt::format("anycl_train: history is NULL but history_capacity is {} — pass an array of that many "
                      "anycl_epoch, or NULL with history_capacity 0",
                      history_capacity));
    const auto lock = lock_for_work(*model, *runtime, call);
    if (model->training)
      throw anycl::ValidationError(
          "anycl_train: this model is already training (anycl_train called from its own callback) — "
          "stop the running training (return non-zero from the callback) and train again after it returns");
    anycl::TrainOptions t = train_options(*options);
    anycl::OptimizerConfig optimizer;
    optimizer.name = options->optimizer && *options->optimizer ? options->optimizer : "rmsprop";
    optimizer.lr = options->lr;
    try {
      anycl::check_optimizer_config(optimizer);
    } catch (const anycl::ValidationError& e) {
      throw anycl::ValidationError(fmt::format("anycl_train: options.optimizer or options.lr: {}", e.what()));
    }
    check_data(*model, train->host, "train");
    if (validation && !(options->validation_split > 0)) check_data(*model, validation->host, "validation");

    anycl::data::Dataset train_set = train->host;
    anycl::data::Dataset held_out;
    const anycl::data::Dataset* eval = validation ? &validation->host : nullptr;
    if (options->validation_split > 0 || options->validation_split < 0) {
      held_out = split_tail(train_set, options->validation_split);
      eval = &held_out;
    }
    if (t.schedule.monitor == "val_loss" && !eval)
      throw anycl::ValidationError(
          "anycl_train: options.monitor is \"val_loss\" but there is no validation data — pass validation or "
          "options.validation_split, or monitor \"loss\"");
    std::atomic<bool> stop{false};
    t.stop = &stop;
    anycl::Trainer trainer({runtime->rt.get()}, model->saved.spec, optimizer, t);
    if (model->has_weights) trainer.model().upload_weights(model->saved.parameters);
    resume(trainer, *options);
    if (options->on_progress)
      trainer.on_progress = [&](const anycl::Progress& p) {
        const anycl_progress c{p.epoch, p.epochs, p.step, p.steps, p.loss, p.accuracy, p.seconds};
        if (options->on_progress(&c, options->user) != 0) stop = true;
      };
    // Before the caller's epoch callback the model takes the weights reached, so that predicting,
    // evaluating or saving it there sees them (as Keras' ModelCheckpoint needs).
    const WeightsBefore before(*model);
    TrainingFlag flag(*model);
    trainer.on_epoch_end = [&](const anycl::EpochStats& s) {
      const anycl_epoch e = to_c(s);
      if (!options->on_epoch) return;
      take_weights(*model, trainer);
      if (options->on_epoch(&e, options->user) != 0) stop = true;
    };
    try {
      trainer.fit(train_set, eval, "val");
    } catch (...) {
      before.restore(*model);  // a failure leaves the model as it was before the call
      throw;
    }
    // The weights reached (also after a stop) become the model's.
    take_weights(*model, trainer);
    const auto& done = trainer.history();
    for (size_t i = 0; history && i < done.size() && i < history_capacity; ++i)
      put_epoch(history, i, to_c(done[i]), options->struct_size);
    if (epochs_done) *epochs_done = done.size();
    if (stopped) *stopped = trainer.stopped() ? 1 : 0;
  });
}

}  // extern "C"
