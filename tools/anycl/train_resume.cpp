// Checkpoint folders, recorded flags and the stop flag for `anycl train`.
#include "train_resume.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <filesystem>

#include "anycl/data/dataset.hpp"
#include "anycl/error.hpp"
#include "anycl/train/checkpoint.hpp"
#include "args.hpp"
#include "util/process.hpp"

namespace anycl::cli {
namespace {

// Set from a signal handler (POSIX) or the console's handler thread (Windows): lock-free atomics.
std::atomic<int> g_signal{0};
std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the stop flag is set from a signal handler");
static_assert(std::atomic<int>::is_always_lock_free, "the signal is set from a signal handler");

void on_stop_signal(int sig) {
  g_signal = sig;
  g_stop.store(true);
}

}  // namespace

std::string checkpoint_file(const std::string& dir) { return dir + "/checkpoint.anyclckpt"; }

ResumeSource resume_source(const std::string& resume) {
  if (resume.empty()) throw UsageError("--resume needs the folder given to --checkpoint");
  std::error_code ec;
  if (std::filesystem::is_directory(resume, ec)) return {checkpoint_file(resume), resume};
  const std::string folder = std::filesystem::path(resume).parent_path().string();
  return {resume, folder.empty() ? "." : folder};
}

namespace {

template <typename T>
void must_match(const TrainRequest& r, const char* flag, const T& given, const T& recorded,
                const std::string& given_text, const std::string& recorded_text) {
  if (r.given.count(flag) && !(given == recorded))
    throw UsageError(fmt::format(
        "{} {} differs from the checkpoint's ({}) — drop {} to resume the run, or start a new one without "
        "--resume",
        flag, given_text, recorded_text, flag));
}

bool same_folder(const std::string& a, const std::string& b) {
  std::error_code ea, eb;
  const auto ca = std::filesystem::weakly_canonical(a, ea), cb = std::filesystem::weakly_canonical(b, eb);
  return ea || eb ? a == b : ca == cb;
}

}  // namespace

void adopt_checkpoint(TrainRequest& r, const Checkpoint& c, const ResumeSource& source) {
  const RunConfig& run = c.run;
  const std::string data_now = r.data_dir.empty() ? data::default_data_dir() : r.data_dir;
  if (r.given.count("--data") && !run.data_dir.empty() && !same_folder(data_now, run.data_dir))
    throw UsageError(fmt::format(
        "--data {} differs from the checkpoint's ({}) — drop --data to resume the run, or start a new one "
        "without --resume",
        r.data_dir, run.data_dir));
  for (const char* flag : {"--layers", "--activation", "--init", "--dropout"}) {
    if (!r.given.count(flag)) continue;
    const Shape input =
        c.model.spec.input_shape.empty() ? Shape{c.model.spec.input_features} : c.model.spec.input_shape;
    const ModelSpec flags = model_from_flags(r.model, input, c.model.num_classes);
    if (Sequential(flags).summary() != Sequential(c.model.spec).summary())
      throw UsageError(fmt::format(
          "{} describes another model than the checkpoint's:\n{}— drop the model flags to resume the run, or "
          "start a new one without --resume",
          flag, Sequential(c.model.spec).summary()));
  }
  must_match(r, "--optimizer", r.optimizer.name, c.optimizer, r.optimizer.name, c.optimizer);
  must_match(r, "--seed", r.train.seed, c.seed, std::to_string(r.train.seed), std::to_string(c.seed));
  must_match(r, "--batch", r.train.batch, c.batch, std::to_string(r.train.batch), std::to_string(c.batch));
  must_match(r, "--limit", r.load.limit, run.limit, std::to_string(r.load.limit), std::to_string(run.limit));
  must_match(r, "--classes", r.load.num_classes, run.num_classes, std::to_string(r.load.num_classes),
             std::to_string(run.num_classes));
  must_match(r, "--lr-schedule", r.train.schedule, c.schedule, schedule_text(r.train.schedule),
             schedule_text(c.schedule));
  must_match(r, "--validation-split", r.load.validation_split, run.validation_split,
             fmt::format("{:g}", r.load.validation_split), fmt::format("{:g}", run.validation_split));
  if (!run.data_dir.empty()) r.data_dir = run.data_dir;
  r.load.limit = run.limit;
  r.load.validation_split = run.validation_split;
  if (run.num_classes) r.load.num_classes = run.num_classes;
  r.optimizer.name = c.optimizer;
  r.train.schedule = c.schedule;
  if (!r.given.count("--lr")) r.optimizer.lr = c.learning_rate;
  r.train.seed = c.seed;
  r.train.batch = c.batch;
  if (!r.given.count("--epochs") && run.epochs) r.train.epochs = run.epochs;
  if (!r.given.count("--checkpoint-every")) r.train.checkpoint_every = run.checkpoint_every;
  if (!r.given.count("--devices") && !r.given.count("--device") && !run.devices.empty())
    r.device_specs = run.devices;
  if (!r.given.count("--split") && !run.shares.empty()) r.split = SplitFlag{false, run.shares};
  if (run.processes > 1) r.distributed = true;                           // under mpirun again, as the run was
  if (!r.given.count("--checkpoint")) r.checkpoint_dir = source.folder;  // keep checkpointing there
}

void create_checkpoint_folder(const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec)
    throw Error(fmt::format("cannot create the checkpoint folder '{}': {} — choose a writable folder", dir,
                            ec.message()));
}

Error with_resume_hint(const Error& e, const std::string& checkpoint_path,
                       const std::string& checkpoint_dir) {
  const bool kept = !checkpoint_path.empty() && std::filesystem::exists(checkpoint_path);
  const bool numeric = dynamic_cast<const NumericalError*>(&e) != nullptr;
  std::string note;
  if (kept)
    note = fmt::format("\nThe last good checkpoint is kept: continue with `anycl train --resume {}{}`",
                       checkpoint_dir, numeric ? " --lr SMALLER" : "");
  else if (numeric && checkpoint_dir.empty())
    note = "\nRe-run with a lower --lr (add --checkpoint DIR to keep a resumable checkpoint).";
  else if (numeric)
    note = "\nRe-run with a lower --lr.";
  return Error(e.what() + note);
}

int report_stop(const std::string& checkpoint_path, const std::string& checkpoint_dir, size_t epochs_done,
                size_t step_in_epoch) {
  const int sig = stop_signal();
  const char* name = sig == SIGTERM ? "SIGTERM" : sig == SIGINT ? "SIGINT" : "a signal to another rank";
  if (!checkpoint_path.empty())
    fmt::print(stderr,
               "\nanycl train: stopped by {} at epoch {}, step {}; checkpoint written to {}\n"
               "Resume with: anycl train --resume {}\n",
               name, epochs_done + 1, step_in_epoch, checkpoint_path, checkpoint_dir);
  else
    fmt::print(stderr,
               "\nanycl train: stopped by {} at epoch {}, step {}; no checkpoint was written — run with "
               "--checkpoint DIR to be able to resume\n",
               name, epochs_done + 1, step_in_epoch);
  return stop_exit_code();
}

const std::atomic<bool>& install_stop_handlers() {
  detail::platform::install_stop_handler(on_stop_signal);  // a second Ctrl-C ends the process at once
  return g_stop;
}

int stop_signal() { return int(g_signal); }

int stop_exit_code() { return 128 + (g_signal ? int(g_signal) : SIGINT); }

}  // namespace anycl::cli
