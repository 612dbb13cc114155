// Learning-rate schedules on the host against Keras' documented formulas and examples
// (ExponentialDecay, PiecewiseConstantDecay, CosineDecay, ReduceLROnPlateau), the --lr-schedule
// text form and its errors, and the optimizers taking a new rate between steps.
#include <doctest/doctest.h>
#include <anycl/error.hpp>
#include <anycl/optim/optimizer.hpp>
#include <anycl/optim/schedule.hpp>

#include <cmath>

#include "data_files.hpp"
#include "helpers.hpp"

constexpr double kPi = 3.14159265358979323846;  // M_PI is not standard C++ (mingw-w64 has none)

namespace {

using anycl::LearningRateSchedule;
using anycl::ScheduleKind;
using anycl::ScheduleState;
using anycl::test::thrown_message;

bool contains_all(const std::string& text, const std::vector<std::string>& words) {
  for (const std::string& w : words)
    if (text.find(w) == std::string::npos) return false;
  return true;
}

float at(const LearningRateSchedule& s, float initial, uint64_t step) {
  return anycl::scheduled_learning_rate(s, ScheduleState{}, initial, step);
}

}  // namespace

TEST_CASE("ExponentialDecay: initial * decay_rate ^ (step / decay_steps), floored with staircase") {
  const LearningRateSchedule s = anycl::parse_schedule("exponential:decay_steps=1000,decay_rate=0.96");
  CHECK(at(s, 0.1f, 0) == 0.1f);
  CHECK(at(s, 0.1f, 500) == doctest::Approx(0.1 * std::sqrt(0.96)).epsilon(1e-6));
  CHECK(at(s, 0.1f, 1000) == doctest::Approx(0.096).epsilon(1e-6));
  CHECK(at(s, 0.1f, 2500) == doctest::Approx(0.1 * std::pow(0.96, 2.5)).epsilon(1e-6));
  LearningRateSchedule stairs = s;
  stairs.staircase = true;
  CHECK(at(stairs, 0.1f, 999) == 0.1f);
  CHECK(at(stairs, 0.1f, 2500) == doctest::Approx(0.1 * 0.96 * 0.96).epsilon(1e-6));
}

TEST_CASE("PiecewiseConstantDecay: Keras' example, values[i] up to and including boundaries[i]") {
  // keras.optimizers.schedules.PiecewiseConstantDecay([100000, 110000], [1.0, 0.5, 0.1])
  const LearningRateSchedule s = anycl::parse_schedule("step:boundaries=100000,110000;values=1.0,0.5,0.1");
  CHECK(at(s, 0.001f, 0) == 1.0f);  // the values are the rates: the optimizer's is not used
  CHECK(at(s, 0.001f, 100000) == 1.0f);
  CHECK(at(s, 0.001f, 100001) == 0.5f);
  CHECK(at(s, 0.001f, 110000) == 0.5f);
  CHECK(at(s, 0.001f, 110001) == 0.1f);
  CHECK(at(s, 0.001f, 5000000) == 0.1f);
}

TEST_CASE(
    "CosineDecay: initial * ((1 - alpha) * 0.5 * (1 + cos(pi * min(step, decay_steps) / decay_steps)) + "
    "alpha)") {
  const LearningRateSchedule s = anycl::parse_schedule("cosine:decay_steps=1000,alpha=0.1");
  CHECK(at(s, 0.1f, 0) == doctest::Approx(0.1).epsilon(1e-7));
  CHECK(at(s, 0.1f, 250) == doctest::Approx(0.1 * (0.9 * 0.5 * (1 + std::cos(kPi / 4)) + 0.1)).epsilon(1e-6));
  CHECK(at(s, 0.1f, 500) == doctest::Approx(0.055).epsilon(1e-6));
  CHECK(at(s, 0.1f, 1000) == doctest::Approx(0.01).epsilon(1e-6));
  CHECK(at(s, 0.1f, 4000) == doctest::Approx(0.01).epsilon(1e-6));  // held at alpha after decay_steps
  CHECK(at(anycl::parse_schedule("cosine:decay_steps=10"), 1.0f, 10) == doctest::Approx(0.0).epsilon(1e-7));
}

TEST_CASE(
    "CosineDecay's warm-up: linear from the optimizer's rate to warmup_target, then the decay from it") {
  // Keras' CosineDecay(0.125, decay_steps=16, alpha=0.25, warmup_target=1.0, warmup_steps=8): the values
  // below are worked out by hand (the rates are exact binary fractions but where a cosine enters).
  const LearningRateSchedule s =
      anycl::parse_schedule("cosine:decay_steps=16,alpha=0.25,warmup_target=1,warmup_steps=8");
  CHECK(s.has_warmup());
  CHECK(at(s, 0.125f, 0) == 0.125f);     // step 0: the optimizer's rate
  CHECK(at(s, 0.125f, 1) == 0.234375f);  // 0.125 + 0.875 * 1/8
  CHECK(at(s, 0.125f, 4) == 0.5625f);    // halfway up
  CHECK(at(s, 0.125f, 7) == 0.890625f);  // warmup_steps - 1: 0.125 + 0.875 * 7/8
  CHECK(at(s, 0.125f, 8) == 1.0f);       // warmup_steps: the decay's first step, at the target
  CHECK(at(s, 0.125f, 12) == doctest::Approx(0.75 * 0.5 * (1 + std::cos(kPi / 4)) + 0.25).epsilon(1e-6));
  CHECK(at(s, 0.125f, 16) == doctest::Approx(0.625).epsilon(1e-6));  // halfway down: (1 + 0.25) / 2
  CHECK(at(s, 0.125f, 24) == 0.25f);  // warmup_steps + decay_steps: alpha * warmup_target
  CHECK(at(s, 0.125f, 25) == 0.25f);  // and held there
  CHECK(at(s, 0.125f, 1000000) == 0.25f);
  // Keras' documented example warms up from 0: CosineDecay(0, 1000, warmup_target=0.1, warmup_steps=1000).
  const LearningRateSchedule from_zero =
      anycl::parse_schedule("cosine:decay_steps=1000,warmup_target=0.1,warmup_steps=1000");
  CHECK(at(from_zero, 0.0f, 0) == 0.0f);
  CHECK(at(from_zero, 0.0f, 500) == doctest::Approx(0.05).epsilon(1e-6));
  CHECK(at(from_zero, 0.0f, 999) == doctest::Approx(0.0999).epsilon(1e-6));
  CHECK(at(from_zero, 0.0f, 1000) == doctest::Approx(0.1).epsilon(1e-7));
  CHECK(at(from_zero, 0.0f, 2000) == 0.0f);  // alpha 0
  // warmup_steps 0 with a target: no rise, the decay starts at the target (Keras' cond is never true).
  const LearningRateSchedule no_rise = anycl::parse_schedule("cosine:decay_steps=10,warmup_target=0.5");
  CHECK(at(no_rise, 0.125f, 0) == 0.5f);
  CHECK(at(no_rise, 0.125f, 5) == doctest::Approx(0.25).epsilon(1e-6));
  // Without warmup_target Keras ignores warmup_steps: the plain decay from the optimizer's rate.
  const LearningRateSchedule ignored = anycl::parse_schedule("cosine:decay_steps=10,warmup_steps=4");
  CHECK_FALSE(ignored.has_warmup());
  CHECK(at(ignored, 0.5f, 0) == 0.5f);
  CHECK(at(ignored, 0.5f, 5) == doctest::Approx(0.25).epsilon(1e-6));
  CHECK(ignored == anycl::parse_schedule("cosine:decay_steps=10"));
}

TEST_CASE("ReduceLROnPlateau follows Keras' on_epoch_end: patience, cooldown, min_delta, min_lr") {
  LearningRateSchedule s = anycl::parse_schedule("plateau:factor=0.5,patience=2,min_delta=0,cooldown=1");
  ScheduleState state;
  const double losses[] = {1.0, 0.9, 0.95, 0.95, 0.95, 0.95, 0.8, 0.8};
  const float rates[] = {1, 1, 1, 0.5f, 0.5f, 0.25f, 0.25f, 0.25f};
  for (size_t e = 0; e < 8; ++e) {
    CAPTURE(e);
    anycl::plateau_epoch_end(s, state, 1.0f, losses[e]);
    CHECK(anycl::scheduled_learning_rate(s, state, 1.0f, 999) == rates[e]);
  }
  // min_lr bounds the reduction, and a rate at min_lr is not reduced again.
  s = anycl::parse_schedule("plateau:factor=0.1,patience=1,min_lr=0.3");
  state = {};
  for (int e = 0; e < 4; ++e) anycl::plateau_epoch_end(s, state, 1.0f, 5.0);
  CHECK(state.learning_rate == 0.3f);
  // min_delta: a decrease smaller than it is no improvement (Keras' default 1e-4).
  s = anycl::parse_schedule("plateau:patience=1");
  CHECK(s.min_delta == 1e-4);
  CHECK(s.factor == 0.1);
  state = {};
  anycl::plateau_epoch_end(s, state, 1.0f, 1.0);
  CHECK(anycl::plateau_epoch_end(s, state, 1.0f, 1.0 - 5e-5));
  CHECK(state.learning_rate == doctest::Approx(0.1));
}

TEST_CASE("Keras' defaults for ReduceLROnPlateau, and the text form reads back exactly") {
  const LearningRateSchedule p = anycl::parse_schedule("plateau");
  CHECK(p.factor == 0.1);
  CHECK(p.patience == 10);
  CHECK(p.min_delta == 1e-4);
  CHECK(p.cooldown == 0);
  CHECK(p.min_lr == 0);
  for (const char* spec : {"exponential:decay_steps=1000,decay_rate=0.96",
                           "exponential:decay_steps=3.5,decay_rate=0.1,staircase=1",
                           "step:boundaries=10,20;values=0.1,0.01,0.001", "cosine:decay_steps=5000,alpha=0.1",
                           "cosine:decay_steps=5000,alpha=0.1,warmup_target=0.0123,warmup_steps=250",
                           "plateau:patience=3,factor=0.5,monitor=loss", "constant"}) {
    CAPTURE(spec);
    const LearningRateSchedule s = anycl::parse_schedule(spec);
    CHECK(anycl::parse_schedule(anycl::schedule_text(s)) == s);
    CHECK(anycl::schedule_text(anycl::parse_schedule(anycl::schedule_text(s))) == anycl::schedule_text(s));
  }
  // Lists may be separated by ',' throughout.
  CHECK(anycl::parse_schedule("step:boundaries=10,20,values=0.1,0.01,0.001") ==
        anycl::parse_schedule("step:boundaries=10,20;values=0.1,0.01,0.001"));
}

TEST_CASE("bad schedules are refused saying what is wrong and what to write") {
  const std::pair<const char*, std::vector<std::string>> cases[] = {
      {"linear:decay_steps=10", {"unknown schedule 'linear'", "exponential, step, cosine or plateau"}},
      {"exponential:decay_steps=1000", {"needs decay_rate", "exponential:decay_steps=1000,decay_rate=0.96"}},
      {"exponential:decay_rate=0.5", {"needs decay_steps"}},
      {"exponential:decay_steps=0,decay_rate=0.5", {"decay_steps is 0", "> 0"}},
      {"exponential:decay_steps=10,decay_rate=1.5", {"decay_rate is 1.5", "(0, 1]"}},
      {"exponential:decay_steps=10,decay_rate=nan", {"decay_rate is nan", "finite"}},
      {"exponential:decay_steps=inf,decay_rate=0.5", {"decay_steps is inf"}},
      {"exponential:decay_steps=ten,decay_rate=0.5", {"decay_steps=ten is not a number"}},
      {"exponential:decay_steps=10,decay_rate=0.5,alpha=0.1", {"exponential schedules take no 'alpha'"}},
      {"exponential:decay_steps=10,decay_rate=0.5,staircase=yes", {"staircase=1 or staircase=0"}},
      {"cosine:decay_steps=10,alpha=2", {"alpha is 2", "[0, 1]"}},
      {"cosine:decay_steps=10,warmup_target=-0.1,warmup_steps=5", {"warmup_target is -0.1", "(0, 10]"}},
      {"cosine:decay_steps=10,warmup_target=nan,warmup_steps=5", {"warmup_target is nan", "finite"}},
      {"cosine:decay_steps=10,warmup_target=0.1,warmup_steps=2.5", {"warmup_steps is 2.5", "whole number"}},
      {"cosine:decay_steps=10,warmup_target=0.1,warmup_steps=-3", {"warmup_steps is -3", ">= 0"}},
      {"cosine:decay_steps=10,warmup_steps=x", {"warmup_steps=x is not a number"}},
      {"exponential:decay_steps=10,decay_rate=0.5,warmup_target=0.1",
       {"warmup_target is 0.1 but the schedule is exponential", "CosineDecay's alone",
        "cosine:decay_steps=N,"}},
      {"step:boundaries=5;values=0.1,0.01,warmup_steps=3", {"warmup_steps is 3 but the schedule is step"}},
      {"step:boundaries=10,20;values=0.1,0.01", {"values has 2 rates for 2 boundaries", "one value more"}},
      {"step:boundaries=20,10;values=0.1,0.01,0.001", {"boundaries must increase"}},
      {"step:boundaries=-5;values=0.1,0.01", {"boundaries=-5 is not a whole number"}},
      {"step:values=0.1", {"values has 1 rates for 0 boundaries"}},
      {"plateau:factor=1", {"factor is 1", "(0, 1)"}},
      {"step:boundaries=5;values=0.1,inf", {"values[1] is inf", "[0, 10]"}},
      {"plateau:patience=1.5", {"patience=1.5 is not a whole number"}},
      {"plateau:min_delta=-1", {"min_delta is -1"}},
      {"plateau:monitor=accuracy", {"monitor is 'accuracy'", "val_loss, loss"}},
      {"plateau:patience", {"'patience' in 'plateau:patience' is not KEY=VALUE"}},
  };
  for (const auto& entry : cases) {
    const char* const spec = entry.first;  // not a structured binding: the lambda below captures it
    const std::vector<std::string>& words = entry.second;
    CAPTURE(spec);
    const std::string m = thrown_message<anycl::ValidationError>([&] { anycl::parse_schedule(spec); });
    CHECK_MESSAGE(contains_all(m, words), m);
  }
}

TEST_CASE("an optimizer takes a new learning rate between steps without a launch or a wait") {
  auto& rt = anycl::test::runtime();
  for (const char* name : {"sgd", "momentum", "rmsprop", "adam", "adamw"}) {
    CAPTURE(name);
    auto opt = anycl::make_optimizer(rt, 3, {name, 0.5f});
    const anycl::RuntimeCounters before = rt.counters();
    opt->set_learning_rate(0.125f);
    CHECK(rt.counters().kernel_launches == before.kernel_launches);
    CHECK(rt.counters().host_waits == before.host_waits);
    CHECK(opt->learning_rate() == 0.125f);
  }
  // Plain SGD: the change of each weight is exactly lr · gradient at the rate just set.
  auto sgd = anycl::make_optimizer(rt, 3, {"sgd", 0.5f});
  anycl::Tensor w(rt, {3}), g(rt, {3});
  w.upload(std::vector<float>{1.f, 2.f, 3.f});
  g.upload(std::vector<float>{1.f, -2.f, 4.f});
  sgd->set_learning_rate(0.25f);
  sgd->step(w, g);
  CHECK(w.download() == std::vector<float>{0.75f, 2.5f, 2.f});
}
