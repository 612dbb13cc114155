// Checkpoints of data-parallel training through the library API: two replicas stopped mid-epoch
// and resumed in a fresh trainer give the uninterrupted run's figures and weights bit for bit; a
// one-device checkpoint resumes on two replicas and back; resume fails on every process, instead
// of hanging, when one cannot read the checkpoint or read another one; rank 0 alone writes.
#include <doctest/doctest.h>
#include <anycl/data/dataset.hpp>
#include <anycl/error.hpp>
#include <anycl/train/checkpoint.hpp>
#include <anycl/train/trainer.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>

#include "data_files.hpp"
#include "helpers.hpp"

namespace {

using anycl::test::contains_all;
using anycl::test::thrown_message;

constexpr size_t kBatch = 32, kEpochs = 3;  // 256 samples: 8 steps per epoch
constexpr uint64_t kSeed = 5;

const anycl::data::DataSplits& small_fashion() {
  static const anycl::data::DataSplits splits = [] {
    anycl::data::LoadOptions load;
    load.limit = 256;
    return anycl::data::load_folder(anycl::data::kFashionMnistDir, load);
  }();
  return splits;
}

// 784-24-dropout-10 (dropout masks use global rows and steps) with Adam (bias correction uses the
// restored step count).
anycl::ModelSpec spec() {
  anycl::Sequential m(784);
  m.dense(24, anycl::Activation::relu).dropout(0.25f).dense(10);
  return m.spec();
}

anycl::TrainOptions options(const std::string& checkpoint_path = "", size_t every = 0) {
  anycl::TrainOptions o;
  o.epochs = kEpochs;
  o.batch = kBatch;
  o.seed = kSeed;
  o.checkpoint_path = checkpoint_path;
  o.checkpoint_every = every;
  return o;
}

// One process that plays its peers: `on_step(n)` runs inside the first gradient sum of global
// step n (1-based: the last layer's gradients and the stop vote, the last value) and may add a
// peer's stop vote; `peer` adds a peer's part to the
// double sums (the resume agreement). rank/size as given.
class FakeWorld : public anycl::Collective {
 public:
  FakeWorld(int rank, int size, size_t last_layer_values)
      : rank_(rank), size_(size), grads_(last_layer_values) {}
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void sum(std::vector<float>& values) override {
    if (values.size() == grads_ + 1 && on_step) on_step(++steps_, values);
  }
  void sum(std::vector<double>& values) override {
    if (peer) peer(values);
  }
  std::function<void(size_t, std::vector<float>&)> on_step;
  std::function<void(std::vector<double>&)> peer;

 private:
  int rank_, size_;
  size_t grads_, steps_ = 0;
};

// Gradient values of the last layer: the first sum of each step (with the stop vote).
size_t last_layer_values() { return anycl::Sequential(spec()).gradient_ranges().front().second; }

struct Result {
  std::vector<anycl::EpochStats> history;
  std::vector<float> parameters;
  bool stopped = false;
};

Result fit(anycl::Trainer& dp) {
  Result r;
  r.history = dp.fit(small_fashion().train, &small_fashion().test);
  r.stopped = dp.stopped();
  r.parameters = dp.replica(0).model().parameters().download();
  CHECK(r.parameters == dp.replica(1).model().parameters().download());
  return r;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

TEST_CASE("two replicas stopped mid-epoch resume bit-identically to an uninterrupted run") {
  anycl::test::TempDir dir;
  const std::string path = dir.file("dp.anyclckpt");
  Result whole;
  {
    anycl::Runtime a, b;
    anycl::Trainer dp({&a, &b}, spec(), {"adam"}, options());
    whole = fit(dp);
  }
  REQUIRE(whole.history.size() == kEpochs);

  Result first;
  {
    anycl::Runtime a, b;
    FakeWorld world(0, 1, last_layer_values());
    anycl::Trainer dp({&a, &b}, spec(), {"adam"}, options(path, 5), &world);
    uint64_t every_n_steps_done = 0;
    world.on_step = [&](size_t step, std::vector<float>& values) {
      if (step == 7) every_n_steps_done = anycl::read_checkpoint(path).steps_done;  // the step-5 one
      if (step == 11) values.back() += 1.f;  // a peer's stop vote: everyone stops after step 11
    };
    first = fit(dp);
    CHECK(every_n_steps_done == 5);
    CHECK(dp.steps_done() == 11);
  }
  CHECK(first.stopped);
  CHECK(first.history.size() == 1);
  const anycl::Checkpoint saved = anycl::read_checkpoint(path);
  CHECK(saved.batch == kBatch);  // the global batch
  CHECK(saved.epoch == 1);
  CHECK(saved.step_in_epoch == 3);
  CHECK(saved.steps_done == 11);
  CHECK(saved.optimizer_iterations == 11);
  CHECK(saved.epoch_metrics.size() == 6);

  anycl::Runtime a, b;
  anycl::Trainer dp({&a, &b}, spec(), {"adam"}, options(path));
  dp.resume_from(path);
  CHECK(dp.epochs_done() == 1);
  CHECK(dp.step_in_epoch() == 3);
  const Result resumed = fit(dp);
  CHECK_FALSE(resumed.stopped);
  REQUIRE(resumed.history.size() == kEpochs);
  for (size_t e = 0; e < kEpochs; ++e) {
    CAPTURE(e);
    CHECK(resumed.history[e].train_loss == whole.history[e].train_loss);
    CHECK(resumed.history[e].train_accuracy == whole.history[e].train_accuracy);
    CHECK(resumed.history[e].eval.loss == whole.history[e].eval.loss);
  }
  CHECK(same_bits(resumed.parameters, whole.parameters));
  CHECK(anycl::read_checkpoint(path).steps_done == kEpochs * 8);  // the last epoch end
}

TEST_CASE("a one-device checkpoint resumes on two replicas and back") {
  anycl::test::TempDir dir;
  auto& rt = anycl::test::runtime();
  const auto& data = small_fashion();
  anycl::Sequential model(spec());
  model.build(rt, kBatch);
  model.initialize(kSeed);
  auto opt = anycl::make_optimizer(rt, model.parameter_count(), {"adam"});
  anycl::TrainOptions one_epoch = options(dir.file("one.anyclckpt"));
  one_epoch.epochs = 1;
  anycl::Trainer single(model, *opt, one_epoch);
  const anycl::DeviceDataset train_set(rt, data.train), test_set(rt, data.test);
  single.fit(train_set, &test_set);

  anycl::Runtime a, b;
  anycl::TrainOptions two_epochs = options(dir.file("two.anyclckpt"));
  two_epochs.epochs = 2;
  anycl::Trainer dp({&a, &b}, spec(), {"adam"}, two_epochs);
  dp.resume_from(dir.file("one.anyclckpt"));
  const Result parallel = fit(dp);
  REQUIRE(parallel.history.size() == 2);
  CHECK(parallel.history[0].train_loss == single.history()[0].train_loss);  // restored, not retrained

  single.resume_from(dir.file("two.anyclckpt"));
  CHECK(single.epochs_done() == 2);
  CHECK(single.steps_done() == 16);
  CHECK(model.parameters().download() == parallel.parameters);

  // And on: a third epoch on one device from the two replicas' checkpoint.
  anycl::Trainer longer(model, *opt, options());
  longer.resume_from(dir.file("two.anyclckpt"));
  const auto all = longer.fit(train_set, &test_set);
  REQUIRE(all.size() == kEpochs);
  CHECK(std::isfinite(all.back().train_loss));
  CHECK(all.back().train_loss < all.front().train_loss);
}

TEST_CASE("data-parallel resume agrees across processes before changing anything") {
  anycl::test::TempDir dir;
  const std::string path = dir.file("c.anyclckpt");
  anycl::Runtime a;
  {
    anycl::Trainer writer({&a}, spec(), {"adam"}, options());
    writer.save_checkpoint(path);
  }
  REQUIRE(std::filesystem::exists(path));
  FakeWorld world(0, 2, last_layer_values());
  anycl::Trainer dp({&a}, spec(), {"adam"}, options(), &world);

  world.peer = [](std::vector<double>& v) { v[0] += 1; };  // the peer could not read it
  std::string m = thrown_message<anycl::DataError>([&] { dp.resume_from(path); });
  CHECK_MESSAGE(contains_all(m, {"could not be read by 1 of 2 processes", "shared folder"}), m);

  world.peer = [](std::vector<double>& v) {  // the peer read another checkpoint
    for (size_t i = 1; i < v.size(); ++i) v[i] += i == 1 ? v[i] + 1 : v[i];
  };
  m = thrown_message<anycl::DataError>([&] { dp.resume_from(path); });
  CHECK_MESSAGE(contains_all(m, {"different checkpoints", path}), m);

  world.peer = [](std::vector<double>& v) { v[0] += 0; };  // the peer is fine; this one has no file
  m = thrown_message<anycl::DataError>([&] { dp.resume_from(dir.file("nowhere")); });
  CHECK_MESSAGE(contains_all(m, {"rank 0", "cannot open checkpoint", "nowhere"}), m);

  world.peer = [](std::vector<double>& v) {  // the same checkpoint everywhere
    for (size_t i = 1; i < v.size(); ++i) v[i] *= 2;
  };
  CHECK_NOTHROW(dp.resume_from(path));

  FakeWorld second(1, 2, last_layer_values());  // rank 1 takes part but never writes
  anycl::Trainer other({&a}, spec(), {"adam"}, options(), &second);
  other.save_checkpoint(dir.file("rank1.anyclckpt"));
  CHECK_FALSE(std::filesystem::exists(dir.file("rank1.anyclckpt")));

  anycl::TrainOptions bigger = options();
  bigger.batch = 2 * kBatch;
  anycl::Trainer mismatch({&a}, spec(), {"adam"}, bigger);
  m = thrown_message<anycl::ValidationError>([&] { mismatch.resume_from(path); });
  CHECK_MESSAGE(contains_all(m, {"batch 32", "64", "same settings"}), m);
}
