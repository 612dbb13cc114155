// `anycl train` checkpoint plumbing: where a run's checkpoint lives, the flags a checkpoint
// records so that `--resume DIR` continues the same run, the SIGINT/SIGTERM stop flag, and what
// a stopped or failed run tells the user (shared by the one-device and data-parallel paths).
#pragma once

#include <atomic>
#include <string>
#include <vector>

#include "anycl/error.hpp"

namespace anycl::cli {

/// The checkpoint file inside a --checkpoint folder.
std::string checkpoint_file(const std::string& dir);

/// argv as given, or — with --resume DIR — the flags recorded in DIR's checkpoint followed by
/// the ones given now (later wins), plus --checkpoint DIR. A flag that defines the run (data,
/// model, optimizer, batch, seed, data split) given with another value than the checkpoint's is a
/// UsageError; a checkpoint that cannot be read is a DataError (exit 1).
std::vector<std::string> resolve_resume(int argc, char** argv);

/// The text a checkpoint records: the flags of this run (arguments[2..], i.e. after `anycl train`)
/// and the resolved data folder.
std::string recorded_flags(const std::vector<std::string>& arguments, const std::string& data_dir);

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
