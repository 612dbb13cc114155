// Data-parallel training from the command line: builds one Runtime per local device, the MPI
// collective when --distributed, and reports, checkpoints and resumes like the single-device path
// (rank 0 alone prints and writes files; every rank reads the checkpoint it resumes from).
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
#include "rank_devices.hpp"
#include "train_resume.hpp"

namespace anycl::cli {
namespace {

std::vector<std::string> local_device_specs(const ParallelTrainRequest& r) {
  return process_device_specs(r.device_specs, r.device_spec);
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
  const std::vector<std::string> specs = local_device_specs(r);
  check_split_count(r.split, specs.size(), size_t(world));  // before anything slow
  for (const std::string& spec : specs) {
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
  const Sequential layout(model_from_flags(r.model, splits.train.features(), splits.train.num_classes));

  std::string split_note;
  const std::vector<double> shares =
      resolve_split(r.split, pointers, layout.spec(), splits.train, r.train.batch, mpi.get(), split_note);
  TrainOptions options = r.train;
  if (!r.checkpoint_dir.empty()) {  // rank 0 writes, so its folder is the one that must exist
    if (rank == 0) create_checkpoint_folder(r.checkpoint_dir);
    options.checkpoint_path = checkpoint_file(r.checkpoint_dir);
    // A resumed run must split as this one did: record measured shares, not "auto".
    std::vector<std::string> arguments = r.arguments;
    for (size_t i = 0; r.split.automatic && i < arguments.size(); ++i) {
      if (arguments[i] == "--split" && i + 1 < arguments.size()) arguments[i + 1] = format_split(shares);
      if (arguments[i].rfind("--split=", 0) == 0) arguments[i] = "--split=" + format_split(shares);
    }
    options.checkpoint_app = recorded_flags(arguments, splits.dir);
  }
  // Under mpirun, Ctrl-C reaches every rank as SIGTERM; the ranks agree to stop after the same step.
  options.stop = &install_stop_handlers();
  DataParallelTrainer trainer(pointers, layout.spec(), r.optimizer, options, mpi.get(), shares);
  if (rank == 0 && r.quiet && r.split.automatic) fmt::print("split: {}\n", split_note);  // to repeat the run
  if (speak) {
    fmt::print("data-parallel: {} process(es) × {} device(s) = {} replicas; global batch {}\n", world,
               pointers.size(), size_t(world) * pointers.size(), r.train.batch);
    fmt::print("split: {}\n", split_note);
    for (Runtime* rt : pointers)
      fmt::print("  rank {} device: {} ({})\n", rank, rt->info().name, rt->info().platform_name);
    fmt::print("data: {} — {} training, {} test samples\n{}", splits.dir, splits.train.count,
               splits.test.count, trainer.replica(0).model().summary());
    std::fflush(stdout);
  }
  ProgressDisplay display(false, !speak);
  std::unique_ptr<MetricsFile> metrics;
  if (rank == 0 && !r.metrics_path.empty()) metrics = std::make_unique<MetricsFile>(r.metrics_path);
  if (r.resume) {
    trainer.resume_from(options.checkpoint_path);
    if (speak)
      fmt::print("resuming from {} at epoch {}, step {} (global step {})\n", options.checkpoint_path,
                 trainer.epochs_done() + 1, trainer.step_in_epoch(), trainer.steps_done());
    for (const EpochStats& s : trainer.history()) {
      display.epoch_end(s, r.train.epochs);
      if (metrics) metrics->write(s);
    }
  }
  trainer.on_epoch_end = [&](const EpochStats& s) {
    display.epoch_end(s, r.train.epochs);
    if (metrics) metrics->write(s);
  };
  const bool has_val = splits.validation.count > 0;
  std::vector<EpochStats> history;
  const uint64_t steps_before = trainer.steps_done();
  try {
    history =
        trainer.fit(splits.train, has_val ? &splits.validation : &splits.test, has_val ? "val" : "test");
  } catch (const Error& e) {
    throw with_resume_hint(e, options.checkpoint_path, r.checkpoint_dir);
  }
  const bool reached_max_steps =
      r.train.max_steps && trainer.steps_done() - steps_before >= r.train.max_steps;
  if (trainer.stopped() && !reached_max_steps)  // rank 0 says where; every rank exits with the signal's code
    return rank == 0 ? report_stop(options.checkpoint_path, r.checkpoint_dir, trainer.epochs_done(),
                                   trainer.step_in_epoch())
                     : stop_exit_code();
  const EvalStats test = trainer.evaluate(splits.test);
  if (rank == 0) {
    fmt::print("Test loss: {:.4f} - Test accuracy: {:.4f}\n", test.loss, test.accuracy);
    if (reached_max_steps && speak)
      fmt::print("stopped after {} training steps (--max-steps)\n", r.train.max_steps);
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
