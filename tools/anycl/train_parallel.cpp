// Data-parallel training from the command line: builds one Runtime per local device, the MPI
// collective when --distributed, and reports like the single-device path (rank 0 only).
#include "train_parallel.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <sstream>

#include "anycl/dist/data_parallel.hpp"
#include "anycl/error.hpp"
#include "anycl/train/metrics_file.hpp"
#include "anycl/train/model_file.hpp"
#include "args.hpp"
#include "learning_curves.hpp"
#include "progress.hpp"

namespace anycl::cli {
namespace {

// The rank's index among the processes on its node (Open MPI, MPICH/Slurm), for picking a device.
size_t local_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"})
    if (const char* v = std::getenv(name)) return std::strtoul(v, nullptr, 10);
  return 0;
}

std::vector<std::string> local_device_specs(const ParallelTrainRequest& r) {
  if (!r.device_specs.empty()) return r.device_specs;
  if (!r.device_spec.empty()) return {r.device_spec};
  // One device per rank: the rank-local index among this node's devices of the best kind.
  const auto devices = list_devices();
  const DeviceType best = select_device("").type;
  std::vector<size_t> same_kind;
  for (const auto& d : devices)
    if (d.type == best) same_kind.push_back(d.index);
  return {std::to_string(same_kind[local_rank() % same_kind.size()])};
}

}  // namespace

std::vector<std::string> parse_device_list(const std::string& text) {
  std::vector<std::string> specs;
  if (text == "all") {
    for (const auto& d : list_devices()) specs.push_back(std::to_string(d.index));
    return specs;
  }
  std::istringstream in(text);
  std::string part;
  while (std::getline(in, part, ','))
    if (!part.empty()) specs.push_back(part);
  if (specs.empty()) throw UsageError("--devices needs 'all' or a comma-separated list of devices, e.g. 0,1");
  return specs;
}

int train_data_parallel(const ParallelTrainRequest& r) {
  std::unique_ptr<Collective> mpi;
  if (r.distributed) {
    if (!mpi_available())
      throw UsageError("--distributed needs an anycl built with MPI (install libopenmpi-dev and rebuild)");
    mpi = make_mpi_collective();
  }
  const int rank = mpi ? mpi->rank() : 0, world = mpi ? mpi->size() : 1;
  const bool speak = rank == 0 && !r.quiet;

  std::vector<std::unique_ptr<Runtime>> runtimes;
  std::vector<Runtime*> pointers;
  for (const std::string& spec : local_device_specs(r)) {
    try {
      select_device(spec);
    } catch (const DeviceSpecError& e) {
      throw UsageError(std::string("--devices: ") + e.what());
    }
    RuntimeOptions options;
    options.device_spec = spec;
    runtimes.push_back(std::make_unique<Runtime>(options));
    pointers.push_back(runtimes.back().get());
  }
  const data::DataSplits splits = data::load_folder(r.data_dir, r.load);
  Sequential layout(splits.train.features());
  for (size_t units : r.hidden) {
    layout.dense(units, r.activation, r.init);
    if (r.dropout > 0.f) layout.dropout(r.dropout);
  }
  layout.dense(splits.train.num_classes, Activation::linear, r.init);

  DataParallelTrainer trainer(pointers, layout.spec(), r.optimizer, r.train, mpi.get());
  if (speak) {
    fmt::print("data-parallel: {} process(es) × {} device(s) = {} replicas; global batch {}\n", world,
               pointers.size(), size_t(world) * pointers.size(), r.train.batch);
    for (Runtime* rt : pointers)
      fmt::print("  rank {} device: {} ({})\n", rank, rt->info().name, rt->info().platform_name);
    fmt::print("data: {} — {} training, {} test samples\n{}", splits.dir, splits.train.count,
               splits.test.count, trainer.replica(0).model().summary());
    std::fflush(stdout);
  }
  ProgressDisplay display(false, !speak);
  std::unique_ptr<MetricsFile> metrics;
  if (rank == 0 && !r.metrics_path.empty()) metrics = std::make_unique<MetricsFile>(r.metrics_path);
  trainer.on_epoch_end = [&](const EpochStats& s) {
    display.epoch_end(s, r.train.epochs);
    if (metrics) metrics->write(s);
  };
  const bool has_val = splits.validation.count > 0;
  const auto history =
      trainer.fit(splits.train, has_val ? &splits.validation : &splits.test, has_val ? "val" : "test");
  const EvalStats test = trainer.evaluate(splits.test);
  if (rank == 0) {
    fmt::print("Test loss: {:.4f} - Test accuracy: {:.4f}\n", test.loss, test.accuracy);
    if (!r.plot_path.empty())
      write_learning_curves_svg(r.plot_path, learning_curves(history),
                                fmt::format("anycl train — {}", splits.dir));
    if (!r.save_path.empty()) {
      save_model(r.save_path, trainer.replica(0).model(), splits.train.num_classes);
      if (speak) fmt::print("model saved to {}\n", r.save_path);
    }
  }
  return 0;
}

}  // namespace anycl::cli
