// Checkpoints and the training guards through the library API: stop mid-epoch → checkpoint →
// resume in fresh objects gives the uninterrupted run's losses and weights bit for bit; damaged
// checkpoints are refused; NaN weights trip the numerical guard; two Runtimes in two threads
// train exactly as one alone.
#include <doctest/doctest.h>
#include <anycl/data/dataset.hpp>
#include <anycl/error.hpp>
#include <anycl/train/checkpoint.hpp>
#include <anycl/train/trainer.hpp>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <sstream>
#include <thread>

#include "data_files.hpp"
#include "hash.hpp"
#include "helpers.hpp"

namespace {

using anycl::test::contains_all;
using anycl::test::thrown_message;

const anycl::data::DataSplits& small_fashion() {
  static const anycl::data::DataSplits splits = [] {
    anycl::data::LoadOptions options;
    options.limit = 300;
    return anycl::data::load_folder(anycl::data::kFashionMnistDir, options);
  }();
  return splits;
}

struct Result {
  std::vector<anycl::EpochStats> history;
  std::vector<float> parameters;
  bool stopped = false;
};

struct Setup {
  std::string checkpoint_path;
  size_t stop_after_steps = 0;  // > 0: set the stop flag after this many steps (counted by progress calls)
  std::string resume_path;
  uint64_t seed = 5;
  size_t batch = 32;
  std::string schedule = "constant";  // --lr-schedule text
  bool batchnorm = false;  // 784-24-BatchNormalization-dropout-10: moving statistics in the checkpoint
};

// 784-24-dropout-10 with Adam (its bias correction depends on the restored step count).
Result train(anycl::Runtime& rt, const Setup& setup) {
  const auto& data = small_fashion();
  anycl::Sequential model(784);
  if (setup.batchnorm)
    model.dense(24, anycl::Activation::relu).add({"batchnorm", "0.9 0.001"}).dropout(0.25f).dense(10);
  else
    model.dense(24, anycl::Activation::relu).dropout(0.25f).dense(10);
  model.build(rt, setup.batch);
  model.initialize(setup.seed);
  auto opt = anycl::make_optimizer(rt, model.parameter_count(), {"adam"});
  std::atomic<bool> stop{false};
  anycl::TrainOptions options;
  options.epochs = 3;
  options.batch = setup.batch;
  options.seed = setup.seed;
  options.checkpoint_path = setup.checkpoint_path;
  options.stop = &stop;
  options.progress_interval_s = setup.stop_after_steps ? 1e-12 : 0;  // a progress call after every step
  options.schedule = anycl::parse_schedule(setup.schedule);
  anycl::Trainer trainer(model, *opt, options);
  size_t steps = 0;
  trainer.on_progress = [&](const anycl::Progress& p) {
    if (p.step < p.steps && ++steps == setup.stop_after_steps) stop = true;
  };
  if (!setup.resume_path.empty()) trainer.resume_from(setup.resume_path);
  anycl::DeviceDataset train_set(rt, data.train), test_set(rt, data.test);
  Result r;
  r.history = trainer.fit(train_set, &test_set);
  r.stopped = trainer.stopped();
  r.parameters = model.download_weights();  // the parameters, then BatchNormalization's moving statistics
  return r;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

std::vector<unsigned char> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

}  // namespace

TEST_CASE("stop mid-epoch then resume in fresh objects is bit-identical to an uninterrupted run") {
  auto& rt = anycl::test::runtime();
  anycl::test::TempDir dir;
  const Result whole = train(rt, {});
  REQUIRE(whole.history.size() == 3);

  // 300 samples / 32 = 10 steps per epoch; stop in epoch 2, then again in epoch 3.
  Setup first;
  first.checkpoint_path = dir.file("run.anyclckpt");
  first.stop_after_steps = 13;
  const Result a = train(rt, first);
  CHECK(a.stopped);
  CHECK(a.history.size() == 1);
  const anycl::Checkpoint saved = anycl::read_checkpoint(first.checkpoint_path);
  CHECK(saved.epoch == 1);
  CHECK(saved.step_in_epoch > 0);
  CHECK(saved.steps_done == 10 + saved.step_in_epoch);
  CHECK(saved.epoch_metrics.size() == 2 * saved.step_in_epoch);

  Setup second = first;
  second.resume_path = first.checkpoint_path;
  second.stop_after_steps = 8;
  const Result b = train(rt, second);
  CHECK(b.stopped);

  Setup third = first;
  third.resume_path = first.checkpoint_path;
  third.stop_after_steps = 0;
  const Result c = train(rt, third);
  CHECK_FALSE(c.stopped);
  REQUIRE(c.history.size() == 3);
  for (size_t e = 0; e < 3; ++e) {
    CAPTURE(e);
    CHECK(c.history[e].train_loss == whole.history[e].train_loss);
    CHECK(c.history[e].train_accuracy == whole.history[e].train_accuracy);
    CHECK(c.history[e].eval.loss == whole.history[e].eval.loss);
  }
  CHECK(same_bits(c.parameters, whole.parameters));
}

TEST_CASE("with a learning-rate schedule, a resumed run equals an uninterrupted one bit for bit") {
  auto& rt = anycl::test::runtime();
  // Exponential decay by step; the plateau rule reduces at the ends of epochs 2 and 3 (min_delta 10:
  // nothing improves after the first), so its state must survive both stops; the cosine warm-up rises
  // over steps 0-15 (the first stop, after 13 steps, falls in it) and decays over 16-25 (the second).
  for (const char* schedule :
       {"exponential:decay_steps=4,decay_rate=0.7", "plateau:patience=1,min_delta=10,factor=0.5",
        "cosine:decay_steps=10,alpha=0.1,warmup_target=0.004,warmup_steps=16"}) {
    CAPTURE(schedule);
    const bool warmup = anycl::parse_schedule(schedule).has_warmup();
    anycl::test::TempDir dir;
    Setup plain;
    plain.schedule = schedule;
    const Result whole = train(rt, plain);
    REQUIRE(whole.history.size() == 3);
    CHECK(whole.history[2].learning_rate < whole.history[0].learning_rate);

    Setup first = plain;
    first.checkpoint_path = dir.file("run.anyclckpt");
    first.stop_after_steps = 13;
    train(rt, first);
    const anycl::Checkpoint saved = anycl::read_checkpoint(first.checkpoint_path);
    CHECK(saved.schedule == anycl::parse_schedule(schedule));
    CHECK(saved.learning_rate == 0.001f);  // Adam's rate, where the schedule starts
    CHECK(saved.history.at(0).learning_rate == whole.history[0].learning_rate);
    const std::vector<unsigned char> bytes = read_bytes(first.checkpoint_path);
    // Format version 2 (3 with a warm-up): an older anycl refuses it instead of losing the schedule.
    CHECK(bytes.at(8) == (warmup ? 3 : 2));

    Setup second = first;
    second.resume_path = first.checkpoint_path;
    second.stop_after_steps = 8;  // stops in epoch 3, after the plateau's first reduction
    train(rt, second);
    CHECK(anycl::read_checkpoint(first.checkpoint_path).epoch == 2);

    Setup third = second;
    third.stop_after_steps = 0;
    const Result c = train(rt, third);
    REQUIRE(c.history.size() == 3);
    for (size_t e = 0; e < 3; ++e) {
      CAPTURE(e);
      CHECK(c.history[e].train_loss == whole.history[e].train_loss);
      CHECK(c.history[e].eval.loss == whole.history[e].eval.loss);
      CHECK(c.history[e].learning_rate == whole.history[e].learning_rate);
    }
    CHECK(same_bits(c.parameters, whole.parameters));

    Setup other = second;  // another schedule (or none) is refused, naming both
    other.schedule = "constant";
    const std::string m = thrown_message<anycl::ValidationError>([&] { train(rt, other); });
    CHECK_MESSAGE(contains_all(m, {"learning-rate schedule", "constant", "same schedule"}), m);
  }
}

TEST_CASE("a checkpoint without a schedule stays format 1, and one of the old layout still loads") {
  auto& rt = anycl::test::runtime();
  anycl::test::TempDir dir;
  Setup s;
  s.checkpoint_path = dir.file("c.anyclckpt");
  s.stop_after_steps = 12;
  train(rt, s);
  std::vector<unsigned char> bytes = read_bytes(s.checkpoint_path);
  CHECK(bytes.at(8) == 1);
  // Rewrite the history lines as versions before schedules wrote them (11 fields), checksum again.
  const uint32_t h =
      uint32_t(bytes[12]) | uint32_t(bytes[13]) << 8 | uint32_t(bytes[14]) << 16 | uint32_t(bytes[15]) << 24;
  std::string text(bytes.begin() + 16, bytes.begin() + 16 + h), old;
  std::istringstream lines(text);
  for (std::string line; std::getline(lines, line);)
    old += (line.rfind("history ", 0) == 0 ? line.substr(0, line.rfind(' ')) : line) + "\n";
  REQUIRE(old.size() < text.size());
  std::vector<unsigned char> rewritten(bytes.begin(), bytes.begin() + 12);
  for (int i = 0; i < 4; ++i) rewritten.push_back((unsigned char)(old.size() >> (8 * i)));
  rewritten.insert(rewritten.end(), old.begin(), old.end());
  rewritten.insert(rewritten.end(), bytes.begin() + 16 + h, bytes.end() - 8);
  const uint64_t sum = anycl::detail::fnv1a(rewritten.data(), rewritten.size());
  for (int i = 0; i < 8; ++i) rewritten.push_back((unsigned char)(sum >> (8 * i)));
  const anycl::Checkpoint c = anycl::decode_checkpoint("old.anyclckpt", rewritten);
  CHECK(c.schedule.kind == anycl::ScheduleKind::constant);
  REQUIRE(c.history.size() == 1);
  CHECK(c.history[0].learning_rate == 0);
  CHECK(c.history[0].train_loss == anycl::read_checkpoint(s.checkpoint_path).history[0].train_loss);
}

TEST_CASE("a model with BatchNormalization resumes bit-identically, its moving statistics restored") {
  auto& rt = anycl::test::runtime();
  anycl::test::TempDir dir;
  Setup plain;
  plain.batchnorm = true;
  const Result whole = train(rt, plain);
  REQUIRE(whole.parameters.size() == 784 * 24 + 24 + 48 + 24 * 10 + 10 + 48);
  // The moving mean left its initial zeros and the moving variance its ones.
  const size_t state = whole.parameters.size() - 48;
  CHECK(whole.parameters[state] != 0.f);
  CHECK(whole.parameters[state + 24] != 1.f);
  Setup first = plain;
  first.checkpoint_path = dir.file("bn.anyclckpt");
  first.stop_after_steps = 13;
  CHECK(train(rt, first).stopped);
  CHECK(anycl::read_checkpoint(first.checkpoint_path).model.parameters.size() == whole.parameters.size());
  Setup rest = first;
  rest.resume_path = first.checkpoint_path;
  rest.stop_after_steps = 0;
  const Result c = train(rt, rest);
  REQUIRE(c.history.size() == 3);
  for (size_t e = 0; e < 3; ++e) CHECK(c.history[e].eval.loss == whole.history[e].eval.loss);
  CHECK(same_bits(c.parameters, whole.parameters));
}

TEST_CASE("resuming with another batch or seed is refused naming the setting") {
  auto& rt = anycl::test::runtime();
  anycl::test::TempDir dir;
  Setup s;
  s.checkpoint_path = dir.file("c.anyclckpt");
  s.stop_after_steps = 3;
  train(rt, s);
  s.resume_path = s.checkpoint_path;
  s.batch = 16;
  std::string m = thrown_message<anycl::ValidationError>([&] { train(rt, s); });
  CHECK_MESSAGE(contains_all(m, {"batch 32", "16", "same settings"}), m);
  s.batch = 32;
  s.seed = 6;
  m = thrown_message<anycl::ValidationError>([&] { train(rt, s); });
  CHECK_MESSAGE(contains_all(m, {"seed 5"}), m);
}

TEST_CASE("damaged checkpoints are refused with the fault named") {
  auto& rt = anycl::test::runtime();
  anycl::test::TempDir dir;
  Setup s;
  s.checkpoint_path = dir.file("c.anyclckpt");
  s.stop_after_steps = 4;
  train(rt, s);
  const auto good = read_bytes(s.checkpoint_path);
  REQUIRE(good.size() > 100);
  CHECK_NOTHROW(anycl::decode_checkpoint("c", good));
  auto error = [](std::vector<unsigned char> bytes) {
    return thrown_message<anycl::DataError>([&] { anycl::decode_checkpoint("ck", bytes); });
  };
  for (size_t at : {size_t(3), size_t(20), good.size() / 2, good.size() - 30, good.size() - 1}) {
    CAPTURE(at);
    auto flipped = good;
    flipped[at] ^= 0x10;
    const std::string m = error(flipped);
    CHECK_MESSAGE(contains_all(m, {"ck"}), m);
    CHECK_MESSAGE(
        (m.find("checksum") != std::string::npos || m.find("not an anycl checkpoint") != std::string::npos),
        m);
  }
  for (size_t keep : {size_t(0), size_t(10), good.size() / 3, good.size() - 1}) {
    CAPTURE(keep);
    const std::string m = error({good.begin(), good.begin() + long(keep)});
    CHECK_MESSAGE((m.find("truncated") != std::string::npos || m.find("checksum") != std::string::npos ||
                   m.find("not an anycl") != std::string::npos),
                  m);
  }
  auto newer = good;
  newer[8] = 9;
  CHECK_MESSAGE(contains_all(error(newer), {"version 9", "upgrade anycl"}), error(newer));
  CHECK_MESSAGE(
      contains_all(error({'A', 'N', 'Y', 'C', 'L', 'M', 'D', 'L', 1, 0, 0, 0}), {"not an anycl checkpoint"}),
      "model file given as a checkpoint");
  CHECK(contains_all(thrown_message<anycl::DataError>([&] { anycl::read_checkpoint(dir.file("none")); }),
                     {"cannot open checkpoint", "none"}));
}

TEST_CASE("NaN weights trip the numerical guard naming epoch and step and the last checkpoint survives") {
  auto& rt = anycl::test::runtime();
  anycl::test::TempDir dir;
  const auto& data = small_fashion();
  anycl::Sequential model(784);
  model.dense(10);
  model.build(rt, 32);
  model.initialize(1);
  auto opt = anycl::make_optimizer(rt, model.parameter_count(), {"sgd"});
  anycl::TrainOptions options;
  options.epochs = 2;
  options.batch = 32;
  options.checkpoint_path = dir.file("c.anyclckpt");
  anycl::Trainer trainer(model, *opt, options);
  anycl::DeviceDataset train_set(rt, data.train);
  trainer.fit(train_set);  // two good epochs, a checkpoint after each
  const auto good = read_bytes(options.checkpoint_path);

  auto weights = model.parameters().download();
  weights[7] = std::numeric_limits<float>::quiet_NaN();
  model.parameters().upload(weights);
  anycl::TrainOptions more = options;
  more.epochs = 3;
  anycl::Trainer next(model, *opt, more);
  next.resume_from(anycl::read_checkpoint(options.checkpoint_path));
  model.parameters().upload(weights);  // the NaN goes in after the restore
  const std::string m = thrown_message<anycl::NumericalError>([&] { next.fit(train_set); });
  CHECK_MESSAGE(contains_all(m, {"diverged at epoch 3, step 1", "global step 21", "lower the learning rate"}),
                m);
  CHECK(read_bytes(options.checkpoint_path) == good);
  CHECK_THROWS_AS(next.save_checkpoint(dir.file("bad.anyclckpt")), anycl::NumericalError);
}

TEST_CASE("a batch the device cannot hold says how much was asked and how much there is") {
  auto& rt = anycl::test::runtime();
  anycl::Sequential model(784);
  model.dense(512, anycl::Activation::relu).dense(10);
  const std::string m = thrown_message<anycl::ValidationError>([&] { model.build(rt, 50000000); });
  CHECK_MESSAGE(contains_all(m, {"MiB of device memory", "50000000", "has", "use a smaller batch"}), m);
}

TEST_CASE("two Runtimes training in two threads match a run alone") {
  const Result alone = train(anycl::test::runtime(), {});
  Result results[2];
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i)
    threads.emplace_back([&results, i] {
      anycl::Runtime rt;  // device from $ANYCL_DEVICE, as the shared test Runtime
      results[i] = train(rt, {});
    });
  for (auto& t : threads) t.join();
  for (const Result& r : results) {
    REQUIRE(r.history.size() == alone.history.size());
    CHECK(r.history.back().train_loss == alone.history.back().train_loss);
    CHECK(same_bits(r.parameters, alone.parameters));
  }
}
