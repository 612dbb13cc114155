// `anycl train` checkpoint plumbing: where a run's checkpoint lives, how `--resume DIR` continues
// the run a checkpoint's typed configuration describes, the SIGINT/SIGTERM stop flag, and what a
// stopped or failed run tells the user.
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "anycl/error.hpp"
#include "anycl/train/checkpoint.hpp"
#include "train_run.hpp"

namespace anycl::cli {

/// The checkpoint file inside a --checkpoint folder.
std::string checkpoint_file(const std::string& dir);

/// The checkpoint file --resume names (a --checkpoint folder or the file itself) and its folder.
struct ResumeSource {
  std::string file, folder;
};
ResumeSource resume_source(const std::string& resume);

/// Continues the checkpointed run in `request`: a flag that defines the run (data, model,
/// optimizer, batch, seed, data split) given with another value than the checkpoint's is a
/// UsageError; flags not given take the checkpoint's values (epochs, devices, shares, checkpoint
/// policy, learning rate). Output paths and printing come from the user's flags only.
void adopt_checkpoint(TrainRequest& request, const Checkpoint& checkpoint, const ResumeSource& source);

/// Creates a --checkpoint folder (and its parents); Error saying which folder otherwise.
void create_checkpoint_folder(const std::string& dir);
/// `e` with a hint appended: how to resume from the kept checkpoint, or to lower --lr.
Error with_resume_hint(const Error& e, const std::string& checkpoint_path, const std::string& checkpoint_dir);
/// After a stop by SIGINT/SIGTERM: says where the run stopped and how to resume it (stderr);
/// returns stop_exit_code().
int report_stop(const std::string& checkpoint_path, const std::string& checkpoint_dir, size_t epochs_done,
                size_t step_in_epoch);

/// Installs SIGINT and SIGTERM handlers that set the returned flag (once; a second signal
/// kills the process as usual).
const std::atomic<bool>& install_stop_handlers();
/// The signal that set the flag (SIGINT or SIGTERM), 0 if none.
int stop_signal();
/// 128 + stop_signal() (SIGINT's code when no signal came: another MPI rank's stopped the run).
int stop_exit_code();

}  // namespace anycl::cli
