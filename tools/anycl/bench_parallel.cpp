// The data-parallel benchmark: each device alone with the ordinary Trainer (other processes
// sleep meanwhile), then every replica together with Trainer, then a few extra steps
// with a device finish after each phase to split a step into compute, exchange and update.
#include "bench_parallel.hpp"

#include <fmt/format.h>

#include <chrono>
#include <functional>
#include <memory>

#include "anycl/data/dataset.hpp"
#include "anycl/dist/rank_devices.hpp"
#include "anycl/error.hpp"
#include "anycl/nn/model_from_flags.hpp"
#include "anycl/train/trainer.hpp"
#include "args.hpp"
#include "bench_table.hpp"

namespace anycl::cli {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

constexpr size_t kBatch = 128;
constexpr int kPhaseSteps = 10;

ModelSpec reference_model(const data::Dataset& train) {
  return reference_mlp(train.features(), train.num_classes);
}

TrainOptions timed_epochs(int repeats) {
  TrainOptions o;
  o.epochs = size_t(1 + repeats);  // epoch 1 is warm-up (CLBlast compiles, first touches)
  o.batch = kBatch;
  o.seed = 1;
  return o;
}

// Samples/s of the ordinary single-device Trainer (what one device gives without data parallelism).
double one_device_rate(Runtime& rt, const ModelSpec& spec, const data::Dataset& train, int repeats) {
  Sequential model(spec);
  auto optimizer = make_optimizer(rt, model.parameter_count(), {"rmsprop"});
  model.build(rt, kBatch);
  model.initialize(1);
  const DeviceDataset data(rt, train);
  Trainer trainer(model, *optimizer, timed_epochs(repeats));
  std::vector<double> rates;
  trainer.on_epoch_end = [&](const EpochStats& e) {
    if (e.epoch > 1) rates.push_back(e.samples_per_second);
  };
  trainer.fit(data);
  return median(rates);
}

struct Phases {
  double compute_ms = 0, exchange_ms = 0, update_ms = 0;
};

// Median phase times of extra steps on the trained replicas (equal shards, as the benchmark trains).
// The ranks are aligned before the exchange, so it excludes waiting for a slower rank's compute.
Phases time_phases(Trainer& dp, Collective& comm, size_t count) {
  const size_t local = dp.replica_count(), world = local * size_t(comm.size());
  const size_t steps_per_epoch = (count + kBatch - 1) / kBatch;
  std::vector<double> compute, exchange, update;
  std::vector<float> host, sum, align(1);
  for (int s = 0; s < kPhaseSteps; ++s) {
    const size_t slot = size_t(s) % steps_per_epoch, first = slot * kBatch;
    const size_t rows = std::min(kBatch, count - first);
    const uint32_t step = uint32_t(dp.steps_done() + size_t(s));
    auto t = Clock::now();
    for (size_t k = 0; k < local; ++k) {
      const size_t g = size_t(comm.rank()) * local + k;
      dp.replica(k).compute_gradients(first, g * rows / world, (g + 1) * rows / world, rows, step, slot);
    }
    for (size_t k = 0; k < local; ++k) dp.replica(k).runtime().finish();
    compute.push_back(ms_since(t));
    comm.sum(align);
    t = Clock::now();
    for (size_t k = 0; k < local; ++k) {
      dp.replica(k).read_gradients(host);
      if (k == 0)
        sum = host;
      else
        for (size_t i = 0; i < sum.size(); ++i) sum[i] += host[i];
    }
    comm.sum(sum);
    for (size_t k = 0; k < local; ++k) dp.replica(k).write_gradients(sum);
    for (size_t k = 0; k < local; ++k) dp.replica(k).runtime().finish();
    exchange.push_back(ms_since(t));
    t = Clock::now();
    for (size_t k = 0; k < local; ++k) dp.replica(k).apply_update();
    for (size_t k = 0; k < local; ++k) dp.replica(k).runtime().finish();
    update.push_back(ms_since(t));
  }
  return {median(compute), median(exchange), median(update)};
}

// One number per device that is equal for equal devices (name, platform and driver), as a double
// so the Collective's sum can gather every process's.
double device_fingerprint(const DeviceInfo& d) {
  return double(std::hash<std::string>{}(d.name + '\n' + d.platform_name + '\n' + d.driver_version) &
                0xffffffu);
}

}  // namespace

int run_bench_parallel(const ParallelBenchOptions& o) {
  std::unique_ptr<Collective> mpi;
  if (o.distributed) {
    if (!mpi_available())
      throw UsageError("--distributed needs an anycl built with MPI (install libopenmpi-dev and rebuild)");
    mpi = make_mpi_collective();
  }
  Collective single_process;
  Collective& comm = mpi ? *mpi : single_process;
  const size_t rank = size_t(comm.rank()), processes = size_t(comm.size());
  const bool speak = rank == 0;

  std::vector<std::unique_ptr<Runtime>> runtimes;
  std::vector<Runtime*> pointers;
  for (const std::string& spec : process_device_specs(o.device_specs, o.device_spec)) {
    try {
      select_device(spec);
    } catch (const DeviceSpecError& e) {
      throw UsageError(std::string(o.device_specs.empty() ? "--device: " : "--devices: ") + e.what());
    }
    RuntimeOptions options;
    options.device_spec = spec;
    runtimes.push_back(std::make_unique<Runtime>(options));
    pointers.push_back(runtimes.back().get());
  }
  const size_t local = pointers.size(), world = local * processes;
  data::LoadOptions load;
  load.limit = o.limit;
  const data::DataSplits splits = data::load_folder(o.data_dir, load);
  const ModelSpec spec = reference_model(splits.train);
  const size_t count = splits.train.count;
  if (speak && !o.json) {
    fmt::print(
        "anycl bench mlp, data-parallel: {} process(es) × {} device(s) = {} replicas; each device alone "
        "first, then all together\n",
        processes, local, world);
    std::fflush(stdout);
  }

  // Identical devices everywhere: time the first alone and compare with N × it. Mixed: time each.
  std::vector<double> fingerprints(world, 0.0);
  for (size_t k = 0; k < local; ++k) fingerprints[rank * local + k] = device_fingerprint(pointers[k]->info());
  comm.sum(fingerprints);
  bool identical = true;
  for (double f : fingerprints) identical = identical && f == fingerprints[0];
  std::vector<double> alone(world, 0.0);
  for (size_t g = 0; g < (identical ? 1 : world); ++g) {
    if (g / local == rank) alone[g] = one_device_rate(*pointers[g % local], spec, splits.train, o.repeats);
    comm.idle_barrier();  // the others sleep, leaving the CPU to the device being timed
  }
  comm.sum(alone);

  Trainer dp(pointers, spec, {"rmsprop"}, timed_epochs(o.repeats), mpi.get());
  std::vector<double> rates;
  dp.on_epoch_end = [&](const EpochStats& e) {
    if (e.epoch > 1) rates.push_back(e.samples_per_second);
  };
  dp.fit(splits.train);
  const double together = median(rates);
  const Phases phases = time_phases(dp, comm, count);
  if (!speak) return 0;

  double reference = 0;
  for (double a : alone) reference += a;
  if (identical) reference = double(world) * alone[0];
  const std::string basis = identical ? fmt::format("{} × one device", world) : "sum of each device alone";
  Table t;
  t.name = "mlp_parallel";
  t.title = "Reference model (784-512-512-10, batch 128): data-parallel training throughput and scaling";
  t.columns = {"configuration", "replicas",    "samples/s", "epoch s (60000)", "step ms",
               "compute ms",    "exchange ms", "update ms", "efficiency",      "efficiency vs"};
  auto per_step = [](double rate) { return Cell::num(1e3 * double(kBatch) / rate, 1); };
  for (size_t g = 0; g < world; ++g) {
    if (alone[g] <= 0) continue;
    const std::string name =
        g < local ? pointers[g]->info().name : fmt::format("rank {} device {}", g / local, g % local);
    t.rows.push_back({Cell::str("one device alone: " + name), Cell::num(1, 0), Cell::num(alone[g], 0),
                      Cell::num(60000.0 / alone[g], 2), per_step(alone[g]), Cell::none(), Cell::none(),
                      Cell::none(), Cell::none(), Cell::none()});
  }
  t.rows.push_back({Cell::str(fmt::format("data-parallel: {} process(es) × {} device(s)", processes, local)),
                    Cell::num(double(world), 0), Cell::num(together, 0), Cell::num(60000.0 / together, 2),
                    per_step(together), Cell::num(phases.compute_ms, 1), Cell::num(phases.exchange_ms, 1),
                    Cell::num(phases.update_ms, 1), Cell::num(together / reference, 2), Cell::str(basis)});
  t.notes.push_back(
      fmt::format("efficiency = data-parallel samples/s ÷ {} ({}); 1.00 is perfect scaling",
                  identical ? fmt::format("({} × the first device alone)", world)
                            : "(the sum of each device's samples/s alone)",
                  identical ? "identical devices: same name, platform and driver" : "mixed devices"));
  t.notes.push_back(fmt::format(
      "{} training samples per epoch ({} steps of the global batch {}), median of {} epochs after one "
      "warm-up "
      "epoch; one device alone = the ordinary single-device Trainer (other processes sleep meanwhile)",
      count, (count + kBatch - 1) / kBatch, kBatch, o.repeats));
  t.notes.push_back(fmt::format(
      "step split (rank 0, median of {} extra steps with a device finish after each phase): compute = "
      "gather, "
      "forward, loss, backward on every local replica at once; exchange = gradients to the host, summed{}, "
      "written back; update = the optimizer step. step ms is from samples/s: in training the phases overlap "
      "and, under MPI, a rank also waits (spinning) for the slowest one, so the phases need not add up to it",
      kPhaseSteps, processes > 1 ? ", MPI_Allreduce" : ""));
  std::string devices;
  for (Runtime* rt : pointers) devices += (devices.empty() ? "" : ", ") + rt->info().name;
  t.notes.push_back(fmt::format("rank 0's replicas: {}", devices));
  if (identical && pointers[0]->info().type == DeviceType::cpu)
    t.notes.push_back(
        "CPU-device replicas on one machine share its cores: there N × one device is out of reach, and the "
        "gradient exchange through host memory adds to every step");
  if (o.json)
    print_json({t}, pointers[0]->info(), "not used (data-parallel mlp)");
  else
    print_table(t, pointers[0]->info());
  return 0;
}

}  // namespace anycl::cli
