// `anycl train --lr-schedule`: Keras' schedules from the command line — the rates each epoch line
// reports, a resumed run equal to an uninterrupted one, and every bad spec answered with exit code 2
// and what to write instead.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <string>

#include "helpers.hpp"

using anycl::test::anycl_cli;
using anycl::test::run_command;

namespace {

// `anycl train ARGS`, which must succeed: its output.
std::string train_ok(const std::string& args) {
  const auto r = run_command(fmt::format("{} train {}", anycl_cli(), args));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  return r.output;
}

}  // namespace

TEST_SUITE_BEGIN("cli");

TEST_CASE("bad --lr-schedule specs exit 2 saying what is wrong and what to write") {
  anycl::test::expect_train_usage_errors({
      {"--lr-schedule linear",
       "--lr-schedule 'linear': unknown schedule 'linear' — choose exponential, step"},
      {"--lr-schedule exponential:decay_steps=100", "needs decay_rate — e.g. exponential:decay_steps=1000"},
      {"--lr-schedule exponential:decay_steps=100,decay_rate=2",
       "decay_rate is 2 — pass a finite number in (0, 1]"},
      {"--lr-schedule cosine:decay_steps=nan", "decay_steps is nan"},
      {"--lr-schedule cosine:decay_steps=10,decay_rate=0.5", "cosine schedules take no 'decay_rate'"},
      {"--lr-schedule cosine:decay_steps=10,warmup_target=0.1,warmup_steps=2.5",
       "warmup_steps is 2.5 — pass a finite number that is a whole number of steps >= 0"},
      {"--lr-schedule cosine:decay_steps=10,warmup_target=-1,warmup_steps=5",
       "warmup_target is -1 — pass a finite number in (0, 10]"},
      {"--lr-schedule exponential:decay_steps=10,decay_rate=0.5,warmup_target=0.1",
       "warmup_target is 0.1 but the schedule is exponential — a warm-up is CosineDecay's alone"},
      {"--lr-schedule 'step:boundaries=10;values=0.1'", "values has 1 rates for 1 boundaries"},
      {"--lr-schedule step:boundaries=10,5,values=0.1,0.01,0.001", "boundaries must increase"},
      {"--lr-schedule plateau:factor=2", "factor is 2"},
      {"--lr-schedule plateau:patience=x", "patience=x is not a whole number"},
      {"--lr-schedule plateau:monitor=val_loss", "needs --validation-split"},
      {"--lr-schedule", "--lr-schedule needs a value"},
  });
  const auto help = run_command(anycl_cli() + " train --help");
  CHECK(help.exit_code == 0);
  CHECK(help.output.find("--lr-schedule SPEC") != std::string::npos);
  CHECK(help.output.find("exponential:decay_steps=N,decay_rate=R") != std::string::npos);
  CHECK(help.output.find("cosine:decay_steps=N[,alpha=A][,warmup_target=T,warmup_steps=W]") !=
        std::string::npos);
}

TEST_CASE("each epoch line reports the scheduled rate of its last step") {
  // 300 samples / batch 100: 3 steps an epoch, so epoch e ends with step 3e - 1 (from 0).
  const std::string out = train_ok(
      "--limit 300 --batch 100 --epochs 2 --layers 16 --optimizer sgd --lr 0.1 "
      "--lr-schedule exponential:decay_steps=3,decay_rate=0.5");
  CHECK_MESSAGE(out.find(" - lr: 0.0629961\n") != std::string::npos, out);  // 0.1 · 0.5^(2/3)
  CHECK_MESSAGE(out.find(" - lr: 0.031498\n") != std::string::npos, out);   // 0.1 · 0.5^(5/3)
  const std::string plain = train_ok("--limit 300 --batch 100 --epochs 1 --layers 16");
  CHECK(plain.find(" - lr: ") == std::string::npos);  // without a schedule the lines are as before
}

TEST_CASE("a run with a plateau schedule resumes from its checkpoint bit-identically") {
  anycl::test::TempDir dir;
  const std::string common = "--limit 300 --batch 100 --epochs 3 --layers 16 --validation-split 0.2 --seed 4";
  const std::string schedule = "--lr-schedule plateau:patience=1,min_delta=10,factor=0.5";
  const std::string whole =
      train_ok(fmt::format("{} {} --save {}", common, schedule, dir.file("whole.anycl")));
  CHECK_MESSAGE(whole.find(" - lr: 0.0005\n") != std::string::npos, whole);  // reduced after epoch 2

  // 240 training samples: 3 steps an epoch; stop in epoch 3, after the reduction at epoch 2's end.
  train_ok(fmt::format("{} {} --checkpoint {} --max-steps 7", common, schedule, dir.file("ck")));
  const auto r = run_command(
      fmt::format("{} train --resume {} --lr-schedule cosine:decay_steps=5", anycl_cli(), dir.file("ck")));
  CHECK(r.exit_code == 2);
  CHECK_MESSAGE(r.output.find("--lr-schedule cosine:decay_steps=5,alpha=0 differs from the checkpoint's "
                              "(plateau:factor=0.5") != std::string::npos,
                r.output);
  const std::string resumed =
      train_ok(fmt::format("--resume {} --save {}", dir.file("ck"), dir.file("resumed.anycl")));
  CHECK(resumed.find(" - lr: 0.0005\n") != std::string::npos);
  CHECK(anycl::test::slurp(dir.file("resumed.anycl")) == anycl::test::slurp(dir.file("whole.anycl")));
}

TEST_CASE("a cosine warm-up rises from 0 without --lr, and resumes from its checkpoint bit-identically") {
  // 300 samples / batch 100: 3 steps an epoch; epoch e ends with step 3e - 1 (from 0). Keras'
  // CosineDecay(0.0, 4, warmup_target=0.1, warmup_steps=4): steps 0-3 rise from 0, 4-8 decay.
  anycl::test::TempDir dir;
  const std::string common = "--limit 300 --batch 100 --epochs 3 --layers 16 --optimizer sgd --seed 4";
  const std::string schedule = "--lr-schedule cosine:decay_steps=4,warmup_target=0.1,warmup_steps=4";
  const std::string whole =
      train_ok(fmt::format("{} {} --save {}", common, schedule, dir.file("whole.anycl")));
  CHECK_MESSAGE(whole.find(" - lr: 0.05\n") != std::string::npos, whole);       // step 2: 0.1 · 2/4
  CHECK_MESSAGE(whole.find(" - lr: 0.0853553\n") != std::string::npos, whole);  // 0.1 · ½(1 + cos(π/4))
  CHECK_MESSAGE(whole.find(" - lr: 0\n") != std::string::npos, whole);          // step 8: alpha 0

  // Stop in the warm-up (after 2 steps), resume without --lr: the checkpoint's start, 0.
  train_ok(fmt::format("{} {} --checkpoint {} --max-steps 2", common, schedule, dir.file("ck")));
  train_ok(fmt::format("--resume {} --save {}", dir.file("ck"), dir.file("resumed.anycl")));
  CHECK(anycl::test::slurp(dir.file("resumed.anycl")) == anycl::test::slurp(dir.file("whole.anycl")));
}

TEST_SUITE_END();
