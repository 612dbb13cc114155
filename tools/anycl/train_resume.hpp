// `anycl train` checkpoint plumbing: where a run's checkpoint lives, the flags a checkpoint
// records so that `--resume DIR` continues the same run, and the SIGINT/SIGTERM stop flag.
#pragma once

#include <atomic>
#include <string>
#include <vector>

namespace anycl::cli {

/// The checkpoint file inside a --checkpoint folder.
std::string checkpoint_file(const std::string& dir);

/// argv as given, or — with --resume DIR — the flags recorded in DIR's checkpoint followed by
/// the ones given now (later wins), plus --checkpoint DIR. A flag that defines the run (data,
/// model, optimizer, batch, seed, data split) given with another value than the checkpoint's is a
/// UsageError; a checkpoint that cannot be read is a DataError (exit 1).
std::vector<std::string> resolve_resume(int argc, char** argv);

/// The text a checkpoint records: the flags of this run (argv[2..]) and the resolved data folder.
std::string recorded_flags(int argc, char** argv, const std::string& data_dir);

/// Installs SIGINT and SIGTERM handlers that set the returned flag (once; a second signal
/// kills the process as usual).
const std::atomic<bool>& install_stop_handlers();
/// The signal that set the flag (SIGINT or SIGTERM), 0 if none.
int stop_signal();

}  // namespace anycl::cli
