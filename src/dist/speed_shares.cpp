// The speed probe: every local replica runs the same gradient steps concurrently; each one's
// finish time is read from a marker event polled with short sleeps (a blocking wait on one queue
// would hide how much later another finished). Speeds are then summed across processes.
#include "anycl/dist/speed_shares.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <memory>
#include <thread>

#include "anycl/dist/replica.hpp"
#include "anycl/error.hpp"
#include "runtime/runtime_impl.hpp"

namespace anycl {
namespace {

using Clock = std::chrono::steady_clock;

// Seconds from `start` until each queue has finished what is enqueued on it now.
std::vector<double> finish_times(const std::vector<std::unique_ptr<Replica>>& replicas,
                                 Clock::time_point start) {
  std::vector<compute::event> markers;
  for (auto& r : replicas) {
    markers.emplace_back(r->runtime().enqueue_marker("speed probe"), false);
    detail::check_cl(clFlush(r->runtime().queue()), "clFlush", "speed probe");
  }
  std::vector<double> seconds(replicas.size(), -1.0);
  for (size_t left = replicas.size(); left > 0;) {
    for (size_t i = 0; i < markers.size(); ++i) {
      if (seconds[i] >= 0) continue;
      cl_int status = CL_QUEUED;
      detail::check_cl(clGetEventInfo(markers[i].get(), CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status,
                                      &status, nullptr),
                       "clGetEventInfo", "speed probe");
      if (status < 0)
        detail::check_cl(status, "gradient step", "speed probe on " + replicas[i]->runtime().info().name);
      if (status == CL_COMPLETE) {
        seconds[i] = std::chrono::duration<double>(Clock::now() - start).count();
        --left;
      }
    }
    if (left > 0) std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  return seconds;
}

}  // namespace

SpeedShares measure_speed_shares(const std::vector<Runtime*>& runtimes, const ModelSpec& spec,
                                 const data::Dataset& train, size_t batch, Collective* collective,
                                 const SpeedProbe& probe) {
  if (runtimes.empty()) throw ValidationError("measure_speed_shares needs at least one device");
  if (batch == 0) throw ValidationError("measure_speed_shares needs a batch of at least one row");
  if (train.count == 0) throw ValidationError("measure_speed_shares needs training data (got 0 samples)");
  if (probe.rounds == 0 || probe.steps_per_round == 0)
    throw ValidationError("the speed probe needs at least one timed round of at least one step");
  Collective single_process;
  Collective& comm = collective ? *collective : single_process;
  const size_t local = runtimes.size(), world = local * size_t(comm.size());

  // The shard each replica would get from an equal split, taken from the first samples.
  const size_t rows = std::min(std::max<size_t>(1, batch / world), train.count);
  const data::Dataset head = train.first(rows);
  std::vector<uint32_t> order(rows);
  for (size_t i = 0; i < rows; ++i) order[i] = uint32_t(i);
  std::vector<std::unique_ptr<Replica>> replicas;
  for (Runtime* rt : runtimes) {
    replicas.push_back(std::make_unique<Replica>(*rt, spec, OptimizerConfig{"sgd"}, rows, 1));
    replicas.back()->set_train_data(head);
    replicas.back()->reserve_slots(1);
    replicas.back()->set_epoch_order(order);
  }
  uint32_t step = 0;
  auto run_steps = [&](size_t steps) {
    const auto start = Clock::now();
    for (size_t s = 0; s < steps; ++s, ++step)
      for (auto& r : replicas) r->compute_gradients(0, 0, rows, batch, step, 0);
    return finish_times(replicas, start);
  };
  run_steps(probe.warmup_steps);
  const auto once = run_steps(1);
  const double slowest = *std::max_element(once.begin(), once.end());
  const size_t steps = std::clamp(size_t(std::ceil(probe.min_round_seconds / std::max(slowest, 1e-6))),
                                  probe.steps_per_round, std::max<size_t>(probe.steps_per_round, 1000));
  comm.idle_barrier();  // every process times its devices over the same stretch of time
  std::vector<std::vector<double>> rates(local);
  for (size_t round = 0; round < probe.rounds; ++round) {
    const auto seconds = run_steps(steps);
    for (size_t k = 0; k < local; ++k) rates[k].push_back(double(rows * steps) / std::max(seconds[k], 1e-9));
  }

  // Each process fills its own slots; the sum gives every process the same world-wide vector
  // (x + 0 + … is exact, so the values are bit-identical everywhere).
  SpeedShares out;
  out.samples_per_second.assign(world, 0.0);
  for (size_t k = 0; k < local; ++k) {
    std::sort(rates[k].begin(), rates[k].end());
    out.samples_per_second[size_t(comm.rank()) * local + k] = rates[k][rates[k].size() / 2];
  }
  comm.sum(out.samples_per_second);
  double total = 0;
  for (double s : out.samples_per_second) total += s;
  for (double s : out.samples_per_second) out.shares.push_back(s / total);
  return out;
}

}  // namespace anycl
