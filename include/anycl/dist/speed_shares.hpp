// Speed-proportional batch shares for data-parallel training: each replica is timed on a few
// gradient steps and gets a share of every batch proportional to its speed, so fast and slow
// devices finish their shards together. Under MPI the speeds are exchanged so every process
// computes the same shares (different shares on different ranks would make training diverge).
//
//   auto speeds = anycl::measure_speed_shares({&gpu, &cpu}, spec, train, 128);
//   anycl::Trainer dp({&gpu, &cpu}, spec, opt, options, nullptr, speeds.shares);
#pragma once

#include <vector>

#include "anycl/data/dataset.hpp"
#include "anycl/dist/collective.hpp"
#include "anycl/nn/sequential.hpp"
#include "anycl/runtime.hpp"

namespace anycl {

/// How long the speed probe runs: warm-up steps (kernel compilation, first-touch) excluded, then
/// `rounds` timed rounds of at least `steps_per_round` steps, more when needed for a round to last
/// about `min_round_seconds` (small models); each replica's speed is its median round.
struct SpeedProbe {
  size_t warmup_steps = 2;
  size_t rounds = 3;
  size_t steps_per_round = 3;
  double min_round_seconds = 0.05;
};

/// Measured speeds and the shares derived from them, one entry per replica of the whole world
/// (processes × local replicas, rank-major, as Trainer orders replicas).
struct SpeedShares {
  std::vector<double> samples_per_second;
  std::vector<double> shares;  // samples_per_second normalised to sum to 1
};

/// Times compute_gradients (gather, forward, loss, backward) on one replica of `spec` per runtime,
/// all local replicas concurrently (as they run in training), each on the shard it would get from
/// an equal split of a `batch`-row batch, using the first samples of `train`. With a `collective`
/// every process must call this with the same number of runtimes; all get identical results.
/// The result depends on timing: keep the shares to repeat a run exactly.
SpeedShares measure_speed_shares(const std::vector<Runtime*>& runtimes, const ModelSpec& spec,
                                 const data::Dataset& train, size_t batch, Collective* collective = nullptr,
                                 const SpeedProbe& probe = {});

}  // namespace anycl
