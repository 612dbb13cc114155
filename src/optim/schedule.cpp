// Learning-rate schedules: Keras' formulas on the host (in double, rounded to float once), their
// checks (one set of messages for C++, the C API and the CLI, naming Keras' settings) and the
// `--lr-schedule` text form, which checkpoints also store.
#include "anycl/optim/schedule.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "anycl/error.hpp"

namespace anycl {
namespace {

constexpr double kPi = 3.14159265358979323846;
constexpr const char* kExamples =
    "e.g. exponential:decay_steps=1000,decay_rate=0.96[,staircase=1], step:boundaries=1000,2000;"
    "values=0.01,0.005,0.001, cosine:decay_steps=5000[,alpha=0.1][,warmup_target=0.01,warmup_steps=500], "
    "plateau[:patience=10,factor=0.1,"
    "min_delta=0.0001,cooldown=0,min_lr=0,monitor=val_loss]";

const char* kind_name(ScheduleKind k) {
  switch (k) {
    case ScheduleKind::exponential_decay:
      return "exponential";
    case ScheduleKind::piecewise_constant:
      return "step";
    case ScheduleKind::cosine_decay:
      return "cosine";
    case ScheduleKind::reduce_on_plateau:
      return "plateau";
    default:
      return "constant";
  }
}

void check_range(const char* name, double value, bool ok, const char* range) {
  if (!std::isfinite(value) || !ok)
    throw ValidationError(fmt::format("{} is {} — pass a finite number {}", name, value, range));
}

double number(const std::string& key, const std::string& value) {
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0' || errno == ERANGE)
    throw ValidationError(fmt::format("{}={} is not a number — {}", key, value, kExamples));
  return v;
}

// A warm-up belongs to cosine decay alone (Keras' CosineDecay); on any other schedule it is refused.
void check_no_warmup(const LearningRateSchedule& s) {
  if (s.kind == ScheduleKind::cosine_decay || (s.warmup_target == 0 && s.warmup_steps == 0)) return;
  const bool target = s.warmup_target != 0;
  throw ValidationError(fmt::format(
      "{} is {} but the schedule is {} — a warm-up is CosineDecay's alone: use cosine:decay_steps=N,"
      "warmup_target=T,warmup_steps=W (lr_schedule \"cosine\"), or leave warmup_target and warmup_steps 0",
      target ? "warmup_target" : "warmup_steps", target ? s.warmup_target : s.warmup_steps,
      kind_name(s.kind)));
}

// Keras' cosine decay of `from` over decay_steps, `step` steps in (clamped at decay_steps).
double cosine_decayed(const LearningRateSchedule& s, double from, double step) {
  const double fraction = std::min(step, s.decay_steps) / s.decay_steps;
  const double cosine = 0.5 * (1.0 + std::cos(kPi * fraction));
  return from * ((1.0 - s.alpha) * cosine + s.alpha);
}

uint64_t count(const std::string& key, const std::string& value) {
  char* end = nullptr;
  errno = 0;
  const unsigned long long v = std::strtoull(value.c_str(), &end, 10);
  if (value.empty() || value[0] == '-' || *end != '\0' || errno == ERANGE)
    throw ValidationError(
        fmt::format("{}={} is not a whole number of steps or epochs — {}", key, value, kExamples));
  return v;
}

}  // namespace

bool LearningRateSchedule::operator==(const LearningRateSchedule& o) const {
  return schedule_text(*this) == schedule_text(o);
}

void check_schedule(const LearningRateSchedule& s) {
  check_no_warmup(s);
  switch (s.kind) {
    case ScheduleKind::constant:
      return;
    case ScheduleKind::exponential_decay:
      check_range("decay_steps", s.decay_steps, s.decay_steps > 0, "> 0 (e.g. 1000)");
      check_range("decay_rate", s.decay_rate, s.decay_rate > 0 && s.decay_rate <= 1, "in (0, 1] (e.g. 0.96)");
      return;
    case ScheduleKind::cosine_decay:
      check_range("decay_steps", s.decay_steps, s.decay_steps > 0, "> 0 (e.g. 1000)");
      check_range("alpha", s.alpha, s.alpha >= 0 && s.alpha <= 1, "in [0, 1] (e.g. 0 or 0.1)");
      check_range("warmup_target", s.warmup_target, s.warmup_target >= 0 && s.warmup_target <= 10,
                  "in (0, 10] (e.g. 0.01), or 0 for no warm-up");
      check_range("warmup_steps", s.warmup_steps,
                  s.warmup_steps >= 0 && s.warmup_steps == std::floor(s.warmup_steps),
                  "that is a whole number of steps >= 0 (e.g. 500)");
      return;
    case ScheduleKind::piecewise_constant:
      if (s.boundaries.empty() || s.values.size() != s.boundaries.size() + 1)
        throw ValidationError(fmt::format(
            "values has {} rates for {} boundaries — pass at least one boundary and one value more than "
            "boundaries (e.g. boundaries=1000,2000 with values=0.01,0.005,0.001)",
            s.values.size(), s.boundaries.size()));
      for (size_t i = 1; i < s.boundaries.size(); ++i)
        if (s.boundaries[i] <= s.boundaries[i - 1])
          throw ValidationError(
              fmt::format("boundaries must increase, but {} follows {} — pass increasing step counts",
                          s.boundaries[i], s.boundaries[i - 1]));
      for (size_t i = 0; i < s.values.size(); ++i)
        check_range(fmt::format("values[{}]", i).c_str(), s.values[i], s.values[i] >= 0 && s.values[i] <= 10,
                    "in [0, 10]");
      return;
    case ScheduleKind::reduce_on_plateau:
      check_range("factor", s.factor, s.factor > 0 && s.factor < 1, "in (0, 1) (e.g. 0.1)");
      check_range("min_delta", s.min_delta, s.min_delta >= 0, ">= 0 (e.g. 0.0001)");
      check_range("min_lr", s.min_lr, s.min_lr >= 0 && s.min_lr <= 10, "in [0, 10] (e.g. 0)");
      if (!s.monitor.empty() && s.monitor != "loss" && s.monitor != "val_loss")
        throw ValidationError(
            fmt::format("monitor is '{}' — pass val_loss, loss, or nothing (val_loss when "
                        "validating, else loss)",
                        s.monitor));
      return;
  }
  throw ValidationError("unknown learning-rate schedule kind");
}

float scheduled_learning_rate(const LearningRateSchedule& s, const ScheduleState& state, float initial,
                              uint64_t iteration) {
  const double step = double(iteration), lr = double(initial);
  switch (s.kind) {
    case ScheduleKind::exponential_decay: {
      const double p = s.staircase ? std::floor(step / s.decay_steps) : step / s.decay_steps;
      return float(lr * std::pow(s.decay_rate, p));
    }
    case ScheduleKind::piecewise_constant: {
      // values[i] while step <= boundaries[i]; the last value after the last boundary (Keras).
      const auto it = std::lower_bound(s.boundaries.begin(), s.boundaries.end(), iteration);
      return s.values[size_t(it - s.boundaries.begin())];
    }
    case ScheduleKind::cosine_decay: {
      if (!s.has_warmup()) return float(cosine_decayed(s, lr, step));
      // Keras: linear from the optimizer's rate to warmup_target while step < warmup_steps, then the
      // cosine decay from warmup_target, its step counted from the warm-up's end.
      const double w = s.warmup_steps;
      if (step < w) return float((s.warmup_target - lr) * (step / w) + lr);
      return float(cosine_decayed(s, s.warmup_target, step - w));
    }
    case ScheduleKind::reduce_on_plateau:
      return state.learning_rate > 0 ? state.learning_rate : initial;
    default:
      return initial;
  }
}

bool plateau_epoch_end(const LearningRateSchedule& s, ScheduleState& state, float initial, double value) {
  if (s.kind != ScheduleKind::reduce_on_plateau) return false;
  if (state.learning_rate <= 0) state.learning_rate = initial;
  // Keras' ReduceLROnPlateau.on_epoch_end in mode "min", step for step.
  if (state.cooldown_counter > 0) {
    --state.cooldown_counter;
    state.wait = 0;
  }
  if (value < state.best - s.min_delta) {
    state.best = value;
    state.wait = 0;
    return false;
  }
  if (state.cooldown_counter > 0) return false;
  if (++state.wait < s.patience) return false;
  if (!(state.learning_rate > float(s.min_lr))) return false;
  state.learning_rate = float(std::max(double(state.learning_rate) * s.factor, s.min_lr));
  state.cooldown_counter = s.cooldown;
  state.wait = 0;
  return true;
}

LearningRateSchedule parse_schedule(const std::string& spec) {
  LearningRateSchedule s;
  const size_t colon = spec.find(':');
  const std::string kind = spec.substr(0, colon);
  if (kind == "constant" || kind == "none")
    s.kind = ScheduleKind::constant;
  else if (kind == "exponential")
    s.kind = ScheduleKind::exponential_decay;
  else if (kind == "step")
    s.kind = ScheduleKind::piecewise_constant;
  else if (kind == "cosine")
    s.kind = ScheduleKind::cosine_decay;
  else if (kind == "plateau")
    s.kind = ScheduleKind::reduce_on_plateau;
  else
    throw ValidationError(fmt::format(
        "unknown schedule '{}' — choose exponential, step, cosine or plateau, {}", kind, kExamples));
  // KEY=VALUE items separated by ',' or ';'; an item without '=' continues the previous key's list.
  std::vector<std::pair<std::string, std::vector<std::string>>> items;
  if (colon != std::string::npos) {
    std::string rest = spec.substr(colon + 1), item;
    for (size_t i = 0; i <= rest.size(); ++i) {
      if (i < rest.size() && rest[i] != ',' && rest[i] != ';') {
        item += rest[i];
        continue;
      }
      const size_t eq = item.find('=');
      if (eq != std::string::npos)
        items.push_back({item.substr(0, eq), {item.substr(eq + 1)}});
      else if (!items.empty() && !item.empty())
        items.back().second.push_back(item);
      else
        throw ValidationError(fmt::format("'{}' in '{}' is not KEY=VALUE — {}", item, spec, kExamples));
      item.clear();
    }
  }
  auto allowed = [&](const std::string& key) {
    if (key == "warmup_target" || key == "warmup_steps") return true;  // check_schedule: cosine's alone
    switch (s.kind) {
      case ScheduleKind::exponential_decay:
        return key == "decay_steps" || key == "decay_rate" || key == "staircase";
      case ScheduleKind::cosine_decay:
        return key == "decay_steps" || key == "alpha";
      case ScheduleKind::piecewise_constant:
        return key == "boundaries" || key == "values";
      case ScheduleKind::reduce_on_plateau:
        return key == "factor" || key == "patience" || key == "min_delta" || key == "cooldown" ||
               key == "min_lr" || key == "monitor";
      default:
        return false;
    }
  };
  bool has_steps = false, has_rate = false;
  for (const auto& [key, list] : items) {
    if (!allowed(key))
      throw ValidationError(fmt::format("{} schedules take no '{}' — {}", kind, key, kExamples));
    const bool is_list = key == "boundaries" || key == "values";
    if (list.size() != 1 && !is_list)
      throw ValidationError(fmt::format("{} takes one value, got {} — {}", key, list.size(), kExamples));
    const std::string& v = list[0];
    if (key == "decay_steps") s.decay_steps = number(key, v), has_steps = true;
    if (key == "decay_rate") s.decay_rate = number(key, v), has_rate = true;
    if (key == "alpha") s.alpha = number(key, v);
    if (key == "warmup_target") s.warmup_target = number(key, v);
    if (key == "warmup_steps") s.warmup_steps = number(key, v);
    if (key == "factor") s.factor = number(key, v);
    if (key == "min_delta") s.min_delta = number(key, v);
    if (key == "min_lr") s.min_lr = number(key, v);
    if (key == "patience") s.patience = count(key, v);
    if (key == "cooldown") s.cooldown = count(key, v);
    if (key == "monitor") s.monitor = v;
    if (key == "staircase") {
      if (v != "0" && v != "1" && v != "true" && v != "false")
        throw ValidationError(fmt::format("staircase={} — write staircase=1 or staircase=0", v));
      s.staircase = v == "1" || v == "true";
    }
    if (key == "boundaries")
      for (const std::string& b : list) s.boundaries.push_back(count(key, b));
    if (key == "values")
      for (const std::string& x : list) s.values.push_back(float(number(key, x)));
  }
  const bool decays = s.kind == ScheduleKind::exponential_decay || s.kind == ScheduleKind::cosine_decay;
  if (decays && !has_steps) throw ValidationError(fmt::format("{} needs decay_steps — {}", kind, kExamples));
  if (s.kind == ScheduleKind::exponential_decay && !has_rate)
    throw ValidationError(fmt::format("exponential needs decay_rate — {}", kExamples));
  check_schedule(s);
  return s;
}

std::string schedule_text(const LearningRateSchedule& s) {
  const std::string kind = kind_name(s.kind);
  switch (s.kind) {
    case ScheduleKind::exponential_decay:
      return fmt::format("{}:decay_steps={},decay_rate={},staircase={}", kind, s.decay_steps, s.decay_rate,
                         s.staircase ? 1 : 0);
    case ScheduleKind::cosine_decay:
      if (s.has_warmup())
        return fmt::format("{}:decay_steps={},alpha={},warmup_target={},warmup_steps={}", kind, s.decay_steps,
                           s.alpha, s.warmup_target, s.warmup_steps);
      return fmt::format("{}:decay_steps={},alpha={}", kind, s.decay_steps, s.alpha);
    case ScheduleKind::piecewise_constant:
      return fmt::format("{}:boundaries={};values={}", kind, fmt::join(s.boundaries, ","),
                         fmt::join(s.values, ","));
    case ScheduleKind::reduce_on_plateau:
      return fmt::format("{}:factor={},patience={},min_delta={},cooldown={},min_lr={}{}", kind, s.factor,
                         s.patience, s.min_delta, s.cooldown, s.min_lr,
                         s.monitor.empty() ? "" : ",monitor=" + s.monitor);
    default:
      return kind_name(s.kind);
  }
}

}  // namespace anycl
