// The training loop over N ≥ 1 replicas. Host work per step is enqueueing only; the host waits at
// progress updates, checkpoints and epoch ends, where it reads the device-side metric slots (and
// checks that the loss is finite: the numerical guard costs no extra wait). With one replica in
// the whole world the gradients never leave the device; with several they are summed on the host
// layer by layer (replica order, then across processes) while the earlier layers' backward runs.
#include "anycl/train/trainer.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>

#include "anycl/blas/blas.hpp"
#include "anycl/blas/tuning.hpp"
#include "anycl/dist/replica.hpp"
#include "anycl/error.hpp"
#include "anycl/profile.hpp"
#include "anycl/train/batch_order.hpp"
#include "anycl/train/checkpoint.hpp"
#include "blas/clblast_program_store.hpp"
#include "hash.hpp"

namespace anycl {
namespace {
using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }
size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

// Stores the steady-clock time at which the event completed; owns a reference to the slot, so a
// trainer destroyed before the device gets there leaves nothing dangling.
void CL_CALLBACK record_completion(cl_event, cl_int, void* user_data) {
  auto* slot = static_cast<std::shared_ptr<std::atomic<int64_t>>*>(user_data);
  (*slot)->store(
      std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count());
  delete slot;
}

RuntimeCounters operator-(const RuntimeCounters& a, const RuntimeCounters& b) {
  return {a.kernel_launches - b.kernel_launches, a.gemm_calls - b.gemm_calls, a.transposes - b.transposes,
          a.host_waits - b.host_waits, a.run_ahead_waits - b.run_ahead_waits};
}
void operator+=(RuntimeCounters& a, const RuntimeCounters& b) {
  a.kernel_launches += b.kernel_launches, a.gemm_calls += b.gemm_calls, a.transposes += b.transposes,
      a.host_waits += b.host_waits, a.run_ahead_waits += b.run_ahead_waits;
}
}  // namespace

// Host data sets uploaded by fit(data::Dataset): one copy per replica, kept for the next fit() —
// keyed by address and checked by content, so a data set changed in place, or a new one at a
// reused address, is uploaded again rather than trained on stale device copies.
struct Trainer::Uploads {
  struct Copies {
    uint64_t fingerprint = 0;
    std::vector<std::unique_ptr<DeviceDataset>> on_replicas;
  };
  std::map<const data::Dataset*, Copies> sets;

  static uint64_t fingerprint(const data::Dataset& d) {
    uint64_t h =
        detail::fnv1a(fmt::format("{} {} {} {} {}", d.count, d.rows, d.cols, d.num_classes, d.target_width));
    h = detail::fnv1a(d.pixels.data(), d.pixels.size(), h);
    h = detail::fnv1a(d.labels.data(), d.labels.size(), h);
    h = detail::fnv1a(d.values.data(), d.values.size() * sizeof(float), h);
    h = detail::fnv1a(d.classes.data(), d.classes.size() * sizeof(int32_t), h);
    return detail::fnv1a(d.targets.data(), d.targets.size() * sizeof(float), h);
  }

  const std::vector<std::unique_ptr<DeviceDataset>>& on(const data::Dataset& host,
                                                        const std::vector<std::unique_ptr<Replica>>& replicas,
                                                        size_t count) {
    Copies& copies = sets[&host];
    const uint64_t now = fingerprint(host);
    if (copies.fingerprint != now) copies.on_replicas.clear(), copies.fingerprint = now;
    auto& list = copies.on_replicas;
    while (list.size() < count)
      list.push_back(std::make_unique<DeviceDataset>(replicas[list.size()]->runtime(), host));
    return list;
  }
};

Trainer::Trainer(Sequential& model, Optimizer& optimizer, TrainOptions options)
    : options_(std::move(options)), collective_(&single_process_), uploads_(std::make_unique<Uploads>()) {
  replicas_.push_back(std::make_unique<Replica>(model, optimizer, options_.batch, options_.seed));
  bounds_ = {0.0, 1.0};  // the model's GEMMs were prepared when it was built (Sequential::build)
  start_schedule();
}

Trainer::Trainer(const std::vector<Runtime*>& runtimes, const ModelSpec& spec,
                 const OptimizerConfig& optimizer, TrainOptions options, Collective* collective,
                 std::vector<double> shares)
    : options_(std::move(options)),
      collective_(collective ? collective : &single_process_),
      uploads_(std::make_unique<Uploads>()) {
  if (runtimes.empty()) throw ValidationError("data-parallel training needs at least one device");
  // Every process holds the same number of local replicas; the world is processes × local
  // replicas, in rank-major order. Shares are given per local replica (the same on every
  // process) or per replica of the world (identical on every process, e.g. measure_speed_shares).
  const size_t world = size_t(collective_->size()) * runtimes.size();
  if (shares.empty()) shares.assign(runtimes.size(), 1.0);
  if (shares.size() != runtimes.size() && shares.size() != world)
    throw ValidationError(
        fmt::format("{} shares for {} devices ({} replicas in all)", shares.size(), runtimes.size(), world));
  for (double s : shares)
    if (!(std::isfinite(s) && s > 0)) throw ValidationError("device shares must be positive numbers");
  double total = 0;
  bounds_.push_back(0);
  for (size_t g = 0; g < world; ++g) bounds_.push_back(total += shares[g % shares.size()]);
  for (double& b : bounds_) b /= total;
  for (Runtime* rt : runtimes)
    replicas_.push_back(std::make_unique<Replica>(*rt, spec, optimizer, options_.batch, options_.seed));
  // Each replica's model prepared its GEMMs on its runtime when it was built (Sequential::build).
  // A warm-up starts from the configured rate, Keras' initial_learning_rate: an unset one (0) is 0
  // there, not the optimizer's default (CosineDecay(0.0, ..., warmup_target=...) as in Keras).
  if (optimizer.lr == 0 && options_.schedule.has_warmup())
    for (auto& r : replicas_) r->optimizer().set_learning_rate(0);
  start_schedule();
}

Trainer::~Trainer() {
  for (cl_event& e : step_marks_)
    if (e) clReleaseEvent(e);
}

void Trainer::hold_back() {
  if (!single()) return;  // the gradient exchange already waits for every step
  if (step_marks_.empty()) step_marks_.assign(std::max<size_t>(options_.steps_ahead, 1), nullptr);
  cl_event& mark = step_marks_[steps_done_ % step_marks_.size()];
  if (!mark) return;
  ++replicas_[0]->runtime().counters().run_ahead_waits;
  const cl_int status = clWaitForEvents(1, &mark);
  clReleaseEvent(mark);
  mark = nullptr;
  detail::check_cl(status, "clWaitForEvents", "an earlier training step");
}

void Trainer::mark_step() {
  if (!single()) return;
  cl_event& mark = step_marks_[steps_done_ % step_marks_.size()];
  mark = replicas_[0]->runtime().enqueue_marker("end of a training step");
}

bool Trainer::single() const noexcept { return replicas_.size() == 1 && collective_->size() == 1; }

Sequential& Trainer::model() { return replicas_[0]->model(); }

std::pair<size_t, size_t> Trainer::shard(size_t rows, size_t k) const {
  const size_t g = size_t(collective_->rank()) * replicas_.size() + k;
  auto edge = [&](size_t i) {
    return i + 1 == bounds_.size() ? rows : size_t(std::floor(bounds_[i] * double(rows)));
  };
  return {edge(g), edge(g + 1)};
}

std::optional<Clock::time_point> Trainer::first_step_finished() const {
  const int64_t ns = first_step_ns_->load();
  if (ns == 0) return std::nullopt;
  return Clock::time_point(std::chrono::duration_cast<Clock::duration>(std::chrono::nanoseconds(ns)));
}

void Trainer::note_first_step() {
  cl_event marker = replicas_[0]->runtime().enqueue_marker("first training step");
  auto* slot = new std::shared_ptr<std::atomic<int64_t>>(first_step_ns_);
  const cl_int status = clSetEventCallback(marker, CL_COMPLETE, record_completion, slot);
  if (status != CL_SUCCESS) delete slot;  // the time is a report, not a result: go on without it
  clReleaseEvent(marker);
}

bool Trainer::combine_gradients() {
  // Layer by layer as each one's gradients reach the host (last layer first): the sum runs in
  // replica order, then MPI's, so every run of the same set-up is identical; meanwhile the devices
  // go on with the earlier layers' backward. A stop vote rides on the first layer's sum, so every
  // process stops after the same step.
  const auto& ranges = replicas_[0]->gradient_ranges();
  sum_grads_.resize(replicas_[0]->model().parameter_count());
  bool stop = false;
  for (size_t c = 0; c < ranges.size(); ++c) {
    const auto [offset, count] = ranges[c];
    const float* first_replica = replicas_[0]->wait_gradients(c);
    chunk_.assign(first_replica, first_replica + count);
    for (size_t k = 1; k < replicas_.size(); ++k) {
      const float* g = replicas_[k]->wait_gradients(c);
      for (size_t i = 0; i < count; ++i) chunk_[i] += g[i];
    }
    if (c == 0) chunk_.push_back(options_.stop && options_.stop->load() ? 1.f : 0.f);
    collective_->sum(chunk_);
    if (c == 0) {
      stop = chunk_.back() > 0.f;
      chunk_.pop_back();
    }
    std::copy(chunk_.begin(), chunk_.end(), sum_grads_.begin() + long(offset));
  }
  for (auto& r : replicas_) r->write_gradients(sum_grads_);
  return stop;
}

// Batch statistics are per replica (Keras' default under a distribution strategy): each replica
// normalises its shard with the shard's statistics and folds them into its moving ones. After the
// step the moving statistics are averaged over the replicas that had rows, in replica order, then
// over the processes (the mean that Keras' MirroredStrategy reads them as), so every replica and
// process holds the same values. A blocking read per step, only for models with such state.
void Trainer::combine_state(size_t rows) {
  const size_t n = replicas_[0]->model().state().size();
  if (n == 0) return;
  std::vector<float> total(n + 1, 0.f), local(n);
  for (size_t k = 0; k < replicas_.size(); ++k) {
    const auto [lo, hi] = shard(rows, k);
    if (hi == lo) continue;  // an empty shard ran no forward: its statistics did not move
    replicas_[k]->model().state().download(local.data(), n);
    for (size_t i = 0; i < n; ++i) total[i] += local[i];
    total[n] += 1.f;
  }
  collective_->sum(total);
  const float count = total[n];
  total.pop_back();
  if (count > 0.f)
    for (float& v : total) v /= count;
  for (auto& r : replicas_) r->model().state().upload(total);
}

void Trainer::step(size_t first, size_t rows, size_t slot) {
  Runtime& rt = replicas_[0]->runtime();
  const RuntimeCounters before = rt.counters();
  hold_back();
  const uint32_t step = uint32_t(steps_done_);
  for (auto& r : replicas_)
    if (Profile* p = r->runtime().profile()) p->set_step(int64_t(steps_done_));
  const bool exchange = !single();
  for (size_t k = 0; k < replicas_.size(); ++k) {
    const auto [lo, hi] = shard(rows, k);
    replicas_[k]->compute_gradients(first, lo, hi, rows, step, slot, exchange);
  }
  if (exchange) stop_agreed_ = combine_gradients();
  if (exchange) combine_state(rows);
  if (options_.schedule.kind != ScheduleKind::constant) {
    const float lr = learning_rate();  // a kernel argument of the update: no wait, no launch
    for (auto& r : replicas_) r->optimizer().set_learning_rate(lr);
  }
  for (auto& r : replicas_) r->apply_update();
  mark_step();
  ++steps_done_;
  if (first_step_ns_->load() == 0 && !first_step_noted_) {
    first_step_noted_ = true;
    note_first_step();
    // Every routine the step calls is compiled by now: keep what CLBlast compiled for the next process.
    for (auto& r : replicas_) detail::keep_clblast_programs(r->runtime());
  }
  step_counters_ += rt.counters() - before;
  for (auto& r : replicas_)
    if (Profile* p = r->runtime().profile()) p->set_step(-1);
}

void Trainer::start_schedule() {
  check_schedule(options_.schedule);
  initial_lr_ = replicas_[0]->optimizer().learning_rate();
}

float Trainer::learning_rate() const {
  const Optimizer& optimizer = replicas_[0]->optimizer();
  if (options_.schedule.kind == ScheduleKind::constant) return optimizer.learning_rate();
  return scheduled_learning_rate(options_.schedule, schedule_state_, initial_lr_, optimizer.iterations());
}

void Trainer::end_epoch_schedule(EpochStats& stats) {
  const Optimizer& optimizer = replicas_[0]->optimizer();
  const uint64_t last = optimizer.iterations() ? optimizer.iterations() - 1 : 0;
  stats.learning_rate = options_.schedule.kind == ScheduleKind::constant
                            ? optimizer.learning_rate()
                            : scheduled_learning_rate(options_.schedule, schedule_state_, initial_lr_, last);
  // Unset, the monitor is val_loss when the evaluation is on validation data (never a test set's), else loss.
  const bool on_val = options_.schedule.monitor == "val_loss" ||
                      (options_.schedule.monitor.empty() && stats.has_eval && stats.eval_name == "val");
  plateau_epoch_end(options_.schedule, schedule_state_, initial_lr_,
                    on_val ? stats.eval.loss : stats.train_loss);
}

std::vector<float> Trainer::global_slots(size_t slots) {
  std::vector<float> total = replicas_[0]->metric_slots(slots);
  for (size_t k = 1; k < replicas_.size(); ++k) {
    const std::vector<float> local = replicas_[k]->metric_slots(slots);
    for (size_t i = 0; i < total.size(); ++i) total[i] += local[i];
  }
  collective_->sum(total);
  for (size_t s = 0; s < slots; ++s)
    if (!std::isfinite(total[2 * s]))
      throw NumericalError(fmt::format(
          "training diverged at epoch {}, step {} (global step {}): the loss became {} — lower the "
          "learning rate (now {:g})",
          epoch_ + 1, s + 1, steps_done_ - step_ + s + 1, total[2 * s],
          replicas_[0]->optimizer().learning_rate()));
  return total;
}

void Trainer::write_checkpoint_if_asked() {
  if (options_.checkpoint_path.empty()) return;
  const HostPhase phase(replicas_[0]->runtime().profile(), "checkpoint");
  save_checkpoint(options_.checkpoint_path);
}

void Trainer::warm_up() {
  // The model's own GEMMs at the batch size, once each: CLBlast compiles exactly the kernels
  // (direct or indirect, per transpose) that training then uses on each replica's device, and nothing larger.
  for (auto& r : replicas_) {
    Runtime& rt = r->runtime();
    for (const GemmShape& g : model_gemm_shapes(model(), options_.batch, &rt)) {
      Tensor a(rt, g.trans_a ? Shape{g.k, g.m} : Shape{g.m, g.k});
      Tensor b(rt, g.trans_b ? Shape{g.n, g.k} : Shape{g.k, g.n});
      Tensor c(rt, {g.m, g.n});
      a.fill(0.f), b.fill(0.f);
      matmul(a, g.trans_a ? Trans::yes : Trans::no, b, g.trans_b ? Trans::yes : Trans::no, c);
    }
    rt.finish();
  }
}

EvalStats Trainer::evaluate(const DeviceDataset& data) {
  const HostPhase phase(replicas_[0]->runtime().profile(), "evaluation");
  if (!evaluator_) evaluator_ = std::make_unique<Evaluator>(model(), options_.batch);
  return evaluator_->evaluate(data);
}

EvalStats Trainer::evaluate(const data::Dataset& data) {
  return evaluate(*uploads_->on(data, replicas_, 1)[0]);
}

std::vector<EpochStats> Trainer::fit(const DeviceDataset& train, const DeviceDataset* eval,
                                     const std::string& eval_name) {
  if (replicas_.size() != 1)
    throw ValidationError(fmt::format(
        "fit() with data already on one device needs one replica, but this trainer has {} — pass the host "
        "data set (data::Dataset) so it is uploaded to every device",
        replicas_.size()));
  return run({&train}, eval, eval_name);
}

std::vector<EpochStats> Trainer::fit(const data::Dataset& train, const data::Dataset* eval,
                                     const std::string& eval_name) {
  std::vector<const DeviceDataset*> on_replicas;
  for (const auto& copy : uploads_->on(train, replicas_, replicas_.size())) on_replicas.push_back(copy.get());
  const DeviceDataset* eval_data = eval ? uploads_->on(*eval, replicas_, 1)[0].get() : nullptr;
  return run(on_replicas, eval_data, eval_name);
}

BatchStats Trainer::train_on_batch(const DeviceDataset& data, const std::vector<uint32_t>& rows) {
  if (!single())
    throw ValidationError("train_on_batch() drives one replica; use fit() for data-parallel training");
  if (rows.empty() || rows.size() > options_.batch)
    throw ValidationError(
        fmt::format("train_on_batch() needs 1 to {} sample indices (the batch the trainer "
                    "was made for), got {}",
                    options_.batch, rows.size()));
  for (uint32_t r : rows)
    if (r >= data.count())
      throw ValidationError(
          fmt::format("sample index {} is out of range: the data set has {} samples", r, data.count()));
  Replica& replica = *replicas_[0];
  replica.use_train_data(data);
  replica.reserve_slots(1);
  replica.set_epoch_order(rows, /*blocking=*/true);
  step(0, rows.size(), 0);
  const std::vector<float> slot = global_slots(1);
  const double n = double(rows.size());
  return {slot[0] / n, slot[1] / n, rows.size()};
}

std::vector<EpochStats> Trainer::run(const std::vector<const DeviceDataset*>& train,
                                     const DeviceDataset* eval, const std::string& eval_name) {
  const DeviceDataset& data = *train[0];
  Sequential& net = model();
  if (data.features() != net.input_features())
    throw ValidationError(fmt::format("the model takes {} input features but the data has {}",
                                      net.input_features(), data.features()));
  if (data.num_classes() > net.output_features())
    throw ValidationError(fmt::format("the data has {} classes but the model has {} outputs",
                                      data.num_classes(), net.output_features()));
  if (train_count_ != 0 && train_count_ != data.count())
    throw ValidationError(fmt::format(
        "the checkpoint was written for {} training samples per epoch but the data has {} — resume with the "
        "same data set, --limit and --validation-split",
        train_count_, data.count()));
  train_count_ = data.count();
  num_classes_ = data.num_classes();
  stopped_ = stop_agreed_ = false;
  if (options_.schedule.kind == ScheduleKind::reduce_on_plateau && options_.schedule.monitor == "val_loss" &&
      !eval)
    throw ValidationError(
        "the learning-rate schedule reduces on a plateau of val_loss but fit() has no validation data — "
        "pass validation data, or monitor loss");
  const size_t steps = ceil_div(data.count(), options_.batch);
  if (step_ > steps)
    throw ValidationError(fmt::format(
        "the checkpoint's position (step {} of epoch {}) is beyond this data's {} steps per epoch — resume "
        "with the data set the checkpoint was written for",
        step_, epoch_ + 1, steps));
  for (size_t k = 0; k < replicas_.size(); ++k) {
    replicas_[k]->use_train_data(*train[k]);
    replicas_[k]->reserve_slots(steps);
  }
  if (!restored_metrics_.empty()) {  // the global sums go to one replica of rank 0, zeros elsewhere
    const std::vector<float> zeros(restored_metrics_.size(), 0.f);
    for (size_t k = 0; k < replicas_.size(); ++k)
      replicas_[k]->set_metric_slots(k == 0 && collective_->rank() == 0 ? restored_metrics_ : zeros);
    restored_metrics_.clear();
  }
  // Progress reads are collective: with several processes they would have to happen at the same
  // step everywhere, so a live view is for one process only.
  const bool live = on_progress && options_.progress_interval_s > 0 && collective_->size() == 1;
  const uint64_t steps_at_start = steps_done_;  // max_steps counts per fit(), the same on every rank
  auto stop_requested = [&] {
    const bool asked = single() ? options_.stop && options_.stop->load() : stop_agreed_;
    return asked || (options_.max_steps && steps_done_ - steps_at_start >= options_.max_steps);
  };
  while (epoch_ < options_.epochs) {
    const size_t epoch = epoch_ + 1;
    const auto start = Clock::now();
    auto last_progress = start;
    // The previous epoch ended with a blocking read, so the last upload from host_order_ is done.
    host_order_ = epoch_order(data.count(), options_.seed, uint32_t(epoch - 1));
    for (auto& r : replicas_) r->set_epoch_order(host_order_);
    const size_t first_step = step_;
    window_start_ = step_;
    while (step_ < steps) {
      if (stop_requested()) {
        write_checkpoint_if_asked();
        stopped_ = true;
        return history_;
      }
      const size_t first = step_ * options_.batch, rows = std::min(options_.batch, data.count() - first);
      step(first, rows, step_);
      ++step_;
      if (options_.checkpoint_every && steps_done_ % options_.checkpoint_every == 0 && step_ < steps)
        write_checkpoint_if_asked();
      if (live && since(last_progress) >= options_.progress_interval_s && step_ < steps) {
        const std::vector<float> slots = global_slots(step_);
        double loss = 0, correct = 0;
        for (size_t s = 0; s < step_; ++s) loss += slots[2 * s], correct += slots[2 * s + 1];
        const size_t samples = first + rows;
        on_progress({epoch, options_.epochs, step_, steps, samples, since(start), loss / double(samples),
                     correct / double(samples)});
        last_progress = Clock::now();
      }
    }
    // Per step, then over steps in double: the order a resumed epoch repeats exactly.
    const std::vector<float> slots = global_slots(steps);
    double loss = 0, correct = 0;
    for (size_t s = 0; s < steps; ++s) loss += slots[2 * s], correct += slots[2 * s + 1];
    EpochStats stats;
    stats.epoch = epoch;
    stats.steps = steps;
    stats.train_loss = loss / double(data.count());
    stats.train_accuracy = correct / double(data.count());
    const size_t trained = std::min(data.count(), (steps - first_step) * options_.batch);
    stats.samples_per_second = double(trained) / since(start);
    if (on_progress && collective_->size() == 1)
      on_progress({epoch, options_.epochs, steps, steps, data.count(), since(start), stats.train_loss,
                   stats.train_accuracy});
    if (eval) {
      stats.has_eval = true;
      stats.eval_name = eval_name;
      stats.eval = evaluate(*eval);
    }
    stats.seconds = since(start);
    end_epoch_schedule(stats);
    history_.push_back(stats);
    ++epoch_;
    step_ = 0;
    if (on_epoch_end) on_epoch_end(stats);
    write_checkpoint_if_asked();
  }
  return history_;
}

}  // namespace anycl
