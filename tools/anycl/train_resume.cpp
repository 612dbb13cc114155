// Checkpoint folders, recorded flags and the stop flag for `anycl train`.
#include "train_resume.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <csignal>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "anycl/error.hpp"
#include "anycl/train/checkpoint.hpp"
#include "args.hpp"

namespace anycl::cli {
namespace {

// Flags whose value defines the run: resuming with another value would not continue it.
const std::set<std::string> kRunFlags = {"--data",    "--layers",          "--activation", "--init",
                                         "--dropout", "--optimizer",       "--seed",       "--batch",
                                         "--limit",   "--validation-split"};

// flag → value of a flag list (--flag value or --flag=value; --quiet, --help, --distributed take none).
std::map<std::string, std::string> flag_values(const std::vector<std::string>& args) {
  std::map<std::string, std::string> values;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a.rfind("--", 0) != 0) continue;
    const auto eq = a.find('=');
    if (eq != std::string::npos)
      values[a.substr(0, eq)] = a.substr(eq + 1);
    else if (a == "--quiet" || a == "--help" || a == "--distributed")
      values[a] = "";
    else
      values[a] = i + 1 < args.size() ? args[++i] : "";
  }
  return values;
}

volatile std::sig_atomic_t g_signal = 0;
std::atomic<bool> g_stop{false};
static_assert(std::atomic<bool>::is_always_lock_free, "the stop flag is set from a signal handler");

extern "C" void on_stop_signal(int sig) {
  g_signal = sig;
  g_stop.store(true);
}

}  // namespace

std::string checkpoint_file(const std::string& dir) { return dir + "/checkpoint.anyclckpt"; }

std::string recorded_flags(const std::vector<std::string>& arguments, const std::string& data_dir) {
  const std::vector<std::string> args(arguments.begin() + long(std::min<size_t>(2, arguments.size())),
                                      arguments.end());
  std::string text;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--resume" || a == "--checkpoint") {
      ++i;  // the folder is given again by --resume
      continue;
    }
    if (a.rfind("--resume=", 0) == 0 || a.rfind("--checkpoint=", 0) == 0) continue;
    text += a + "\n";
  }
  if (!flag_values(args).count("--data")) text += "--data\n" + data_dir + "\n";
  return text;
}

std::vector<std::string> resolve_resume(int argc, char** argv) {
  std::vector<std::string> given(argv, argv + argc);
  const std::vector<std::string> flags(given.begin() + std::min<long>(2, argc), given.end());
  const auto now = flag_values(flags);
  const auto resume = now.find("--resume");
  if (resume == now.end()) return given;
  const std::string& dir = resume->second;
  if (dir.empty()) throw UsageError("--resume needs the folder given to --checkpoint");
  const std::string file = std::filesystem::is_directory(dir) ? checkpoint_file(dir) : dir;
  const Checkpoint checkpoint = read_checkpoint(file);
  std::vector<std::string> recorded;
  std::istringstream lines(checkpoint.app);
  for (std::string line; std::getline(lines, line);) recorded.push_back(line);
  const auto before = flag_values(recorded);
  for (const auto& [flag, value] : now) {
    if (!kRunFlags.count(flag)) continue;
    const auto it = before.find(flag);
    if (it == before.end() || it->second != value)
      throw UsageError(fmt::format(
          "{} {} differs from the checkpoint's ({}) — drop {} to resume the run, or start a new one without "
          "--resume",
          flag, value, it == before.end() ? "the default" : it->second, flag));
  }
  std::vector<std::string> merged(given.begin(), given.begin() + std::min<long>(2, argc));
  merged.insert(merged.end(), recorded.begin(), recorded.end());
  const std::string folder =
      std::filesystem::is_directory(dir) ? dir : std::filesystem::path(dir).parent_path().string();
  merged.push_back("--checkpoint");  // keep checkpointing where the run did, unless told otherwise
  merged.push_back(folder.empty() ? "." : folder);
  merged.insert(merged.end(), flags.begin(), flags.end());
  return merged;
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
  else if (numeric)
    note = "\nRe-run with a lower --lr (add --checkpoint DIR to keep a resumable checkpoint).";
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
  struct sigaction action = {};
  action.sa_handler = on_stop_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;  // a second Ctrl-C ends the process at once
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
  return g_stop;
}

int stop_signal() { return int(g_signal); }

int stop_exit_code() { return 128 + (g_signal ? int(g_signal) : SIGINT); }

}  // namespace anycl::cli
