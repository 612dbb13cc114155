// The train command's one path: devices (one, --devices, or one per MPI rank), data, model
// (from the flags, or the checkpoint's on --resume), the library's Trainer, then the outputs —
// the model first, so a failed secondary output (plot, metrics) never costs it. Rank 0 alone
// prints and writes files.
#include "train_run.hpp"

#include <fmt/format.h>

#include <memory>
#include <sstream>

#include "anycl/dist/rank_devices.hpp"
#include "anycl/dist/replica.hpp"
#include "anycl/error.hpp"
#include "anycl/nn/sequential.hpp"
#include "anycl/profile.hpp"
#include "anycl/train/checkpoint.hpp"
#include "anycl/train/metrics_file.hpp"
#include "anycl/train/model_file.hpp"
#include "anycl/util/atomic_file.hpp"
#include "args.hpp"
#include "device_flag.hpp"
#include "first_use_tuning.hpp"
#include "learning_curves.hpp"
#include "process_clock.hpp"
#include "progress.hpp"
#include "train_resume.hpp"
#include "util/platform.hpp"

namespace anycl::cli {

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

namespace {

// One runtime per device this process trains on; a spec that matches nothing is a usage error.
std::vector<std::unique_ptr<Runtime>> open_runtimes(const TrainRequest& r) {
  const std::vector<std::string> specs = process_device_specs(r.device_specs, r.device_spec);
  std::vector<std::unique_ptr<Runtime>> runtimes;
  for (const std::string& spec : specs) {
    try {
      select_device(spec);
    } catch (const DeviceSpecError& e) {
      if (r.device_specs.empty() && !r.device_from_flag) throw UsageError(env_spec_message(e));
      throw UsageError((!r.device_specs.empty() ? "--devices: " : "--device: ") + std::string(e.what()));
    }
    RuntimeOptions options;
    options.device_spec = spec;
    options.profiling = !r.profile_path.empty();
    runtimes.push_back(std::make_unique<Runtime>(options));
  }
  return runtimes;
}

void print_setup(const TrainRequest& r, const std::vector<Runtime*>& runtimes, int world,
                 const data::DataSplits& splits, Trainer& trainer, const std::string& split_note) {
  if (runtimes.size() > 1 || world > 1) {
    fmt::print("data-parallel: {} process(es) × {} device(s) = {} replicas; global batch {}\n", world,
               runtimes.size(), size_t(world) * runtimes.size(), r.train.batch);
    fmt::print("split: {}\n", split_note);
    for (Runtime* rt : runtimes)
      fmt::print("  rank 0 device: {} ({})\n", rt->info().name, rt->info().platform_name);
  } else {
    const DeviceInfo& d = runtimes[0]->info();
    fmt::print("device: {} ({}, driver {})\n", d.name, d.platform_name, d.driver_version);
  }
  fmt::print("data: {} — {} training, {} {} samples, {} classes\n", splits.dir, splits.train.count,
             splits.validation.count ? splits.validation.count : splits.test.count,
             splits.validation.count ? "validation" : "test", splits.train.num_classes);
  const Optimizer& opt = trainer.replica(0).optimizer();
  fmt::print("{}optimizer: {} (lr {}), batch {}, epochs {}, seed {}\n", trainer.model().summary(), opt.name(),
             opt.learning_rate(), r.train.batch, r.train.epochs, r.train.seed);
  std::fflush(stdout);
}

void print_step_figures(const TrainRequest& r, Trainer& trainer, double data_loaded_at,
                        double runtime_ready_at, double training_started_at) {
  const RuntimeCounters& c = trainer.step_counters();
  const double steps = double(std::max<uint64_t>(trainer.steps_done(), 1));
  fmt::print(
      "per training step: {:.1f} anycl kernel launches{} + {:.1f} CLBlast GEMM calls, {:.1f} blocking host "
      "waits\n",
      double(c.kernel_launches) / steps,
      c.transposes ? fmt::format(" ({:.1f} of them transposes)", double(c.transposes) / steps) : "",
      double(c.gemm_calls) / steps, double(c.host_waits) / steps);
  if (trainer.stopped()) fmt::print("stopped after {} training steps (--max-steps)\n", r.train.max_steps);
  if (const auto first = trainer.first_step_finished())
    fmt::print(
        "start-up: first training step finished {:.3f} s after the process started (data loaded at {:.3f} s, "
        "runtime ready at {:.3f} s, training started at {:.3f} s)\n",
        process_seconds_at(*first), data_loaded_at, runtime_ready_at, training_started_at);
}

}  // namespace

int run_training(TrainRequest r) {
  std::unique_ptr<ResumeSource> resume;
  std::unique_ptr<Checkpoint> resumed;
  if (!r.resume.empty()) {
    resume = std::make_unique<ResumeSource>(resume_source(r.resume));
    resumed = std::make_unique<Checkpoint>(read_checkpoint(resume->file));
    adopt_checkpoint(r, *resumed, *resume);
  }
  std::unique_ptr<Collective> mpi;
  if (r.distributed) {
    if (!mpi_available())
      throw UsageError("--distributed needs an anycl built with MPI (install libopenmpi-dev and rebuild)");
    mpi = make_mpi_collective();
  }
  const int rank = mpi ? mpi->rank() : 0, world = mpi ? mpi->size() : 1;
  const bool speak = rank == 0 && !r.quiet;

  check_split_count(r.split, std::max<size_t>(1, r.device_specs.size()),
                    size_t(world));  // before anything slow

  std::vector<std::unique_ptr<Runtime>> runtimes = open_runtimes(r);
  std::vector<Runtime*> pointers;
  for (auto& rt : runtimes) pointers.push_back(rt.get());
  const double runtime_ready_at = seconds_since_process_start();
  const auto loading = Profile::Clock::now();
  const data::DataSplits splits = data::load_folder(r.data_dir, r.load);
  const double data_loaded_at = seconds_since_process_start();
  if (Profile* p = pointers[0]->profile())
    p->host_phase("data: load " + splits.dir, loading, Profile::Clock::now());
  const ModelSpec spec = [&] {
    if (resumed) return resumed->model.spec;
    try {  // the layer list meets the data's image shape here: a list that does not fit is a usage error
      return model_from_flags(r.model, Shape{1, splits.train.rows, splits.train.cols},
                              splits.train.num_classes);
    } catch (const ValidationError& e) {
      throw UsageError(e.what());
    }
  }();
  if (r.autotune && world == 1)  // before the trainer compiles CLBlast's kernels with the parameters
    run_first_use_tuning(pointers, Sequential(spec), r.train.batch / pointers.size(), !speak);
  try {
    check_optimizer_config(r.optimizer);
  } catch (const ValidationError& e) {
    throw UsageError(std::string("--optimizer/--lr: ") + e.what());
  }
  std::string split_note;
  const std::vector<double> shares =
      runtimes.size() > 1 || world > 1
          ? resolve_split(r.split, pointers, spec, splits.train, r.train.batch, mpi.get(), split_note)
          : std::vector<double>{};
  TrainOptions options = r.train;
  options.run.data_dir = splits.dir;
  options.run.limit = r.load.limit;
  options.run.validation_split = r.load.validation_split;
  options.run.num_classes = r.load.num_classes;
  options.run.shares = shares;  // measured ones when --split auto, so a resume splits the same way
  options.run.devices = r.device_specs;
  options.run.processes = size_t(world);
  if (!r.checkpoint_dir.empty()) {  // rank 0 writes, so its folder is the one that must exist
    if (rank == 0) create_checkpoint_folder(r.checkpoint_dir);
    options.checkpoint_path = checkpoint_file(r.checkpoint_dir);
  }
  // Under mpirun, Ctrl-C reaches every rank as SIGTERM; the ranks agree to stop after the same step.
  options.stop = &install_stop_handlers();
  const bool live = speak && world == 1 && detail::platform::stderr_is_terminal();
  options.progress_interval_s = live ? 0.25 : 0.0;
  Trainer trainer(pointers, spec, r.optimizer, options, mpi.get(), shares);
  if (rank == 0 && r.quiet && r.split.automatic) fmt::print("split: {}\n", split_note);  // to repeat the run
  if (speak) print_setup(r, pointers, world, splits, trainer, split_note);
  {
    const HostPhase phase(pointers[0]->profile(), "CLBlast warm-up");
    trainer.warm_up();  // compile CLBlast's kernels before the clock starts
  }

  ProgressDisplay display(live, !speak);
  display.show_learning_rate = r.train.schedule.kind != ScheduleKind::constant;
  std::unique_ptr<MetricsFile> metrics;
  if (rank == 0 && !r.metrics_path.empty()) metrics = std::make_unique<MetricsFile>(r.metrics_path);
  if (resume) {
    trainer.resume_from(resume->file);
    if (speak)
      fmt::print("resuming from {} at epoch {}, step {} (global step {})\n", resume->file,
                 trainer.epochs_done() + 1, trainer.step_in_epoch(), trainer.steps_done());
    for (const EpochStats& s : trainer.history()) {
      display.epoch_end(s, r.train.epochs);
      if (metrics) metrics->write(s);
    }
  }
  trainer.on_progress = [&](const Progress& p) { display.progress(p); };
  trainer.on_epoch_end = [&](const EpochStats& s) {
    display.epoch_end(s, r.train.epochs);
    if (metrics) metrics->write(s);
  };
  const double training_started_at = seconds_since_process_start();
  const bool has_val = splits.validation.count > 0;
  const uint64_t steps_before = trainer.steps_done();
  try {
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
  if (rank != 0) return 0;
  fmt::print("Test loss: {:.4f} - Test accuracy: {:.4f}\n", test.loss, test.accuracy);
  if (speak) print_step_figures(r, trainer, data_loaded_at, runtime_ready_at, training_started_at);
  if (!r.save_path.empty()) {  // the primary output first: a failed plot must not cost the model
    save_model(r.save_path, trainer.model(), splits.train.num_classes);
    if (speak) fmt::print("model saved to {}\n", r.save_path);
  }
  if (!r.profile_path.empty()) {
    write_file_atomically(r.profile_path, chrome_trace(pointers));
    if (speak) fmt::print("profile (Chrome trace JSON, open in Perfetto) written to {}\n", r.profile_path);
  }
  if (!r.plot_path.empty() && trainer.history().empty())
    throw Error(
        fmt::format("--plot {}: no learning curves to draw — the run stopped before its first epoch "
                    "ended{}",
                    r.plot_path, r.save_path.empty() ? "" : " (the model was saved)"));
  if (!r.plot_path.empty())  // all epochs, resumed ones included
    write_learning_curves_svg(r.plot_path, learning_curves(trainer.history()),
                              fmt::format("anycl train — {}", splits.dir));
  return 0;
}

}  // namespace anycl::cli
