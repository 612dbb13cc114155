// The operating system's processes behind one small interface (process_posix.cpp,
// process_windows.cpp): running a child program, stopping on Ctrl-C, loading a shared library,
// the process's age and path, and noticing a fork. Used by the anycl command and the tests; the
// library itself starts no process and installs no signal handler (only a fork handler: watch_for_fork).
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace anycl::detail::platform {

/// How a child ended: its exit code, or the signal that ended it (Windows: a crash or Ctrl-C exit
/// status is reported as SIGSEGV/SIGILL/SIGFPE or SIGINT, so callers test one thing).
struct ProcessExit {
  int code = 0;
  int signal = 0;
  int64_t pid = 0;  // the child's process id (free again by now)
};

/// A child program: `args[0]` is the program's path, `env` is added to (or replaces in) ours.
struct ProcessSpec {
  std::vector<std::string> args;
  std::vector<std::pair<std::string, std::string>> env;
};

/// Runs `spec` and waits for it. Its output goes where ours goes, or, when `output` is given, is
/// collected there (standard error joined to standard output). Throws anycl::Error when it cannot start.
ProcessExit run_process(const ProcessSpec& spec, std::string* output = nullptr);
/// A child running in the background with its output in the file `log`; `wait()` for its end.
class BackgroundProcess {
 public:
  BackgroundProcess(const ProcessSpec& spec, const std::filesystem::path& log);
  ~BackgroundProcess();
  BackgroundProcess(const BackgroundProcess&) = delete;
  BackgroundProcess& operator=(const BackgroundProcess&) = delete;
  /// Asks it to stop as Ctrl-C would (POSIX: `signal`, SIGINT or SIGTERM; Windows: a console
  /// Ctrl-Break for either, or TerminateProcess for SIGKILL).
  void stop(int signal) const;
  /// Its exit; waits for it once, then repeats the answer.
  ProcessExit wait();

 private:
  intptr_t handle_ = -1;  // pid (POSIX) or process HANDLE (Windows)
  std::optional<ProcessExit> exit_;
};

/// "SIGINT", "SIGSEGV"… for a signal number ("signal N" for others).
std::string signal_name(int signal);

/// Calls `on_stop(SIGINT or SIGTERM)` on the first Ctrl-C / termination request (POSIX: SIGINT,
/// SIGTERM; Windows: the console's Ctrl-C, Ctrl-Break and close events); a second one ends the
/// process at once. `on_stop` must be async-signal-safe (set an atomic flag).
void install_stop_handler(void (*on_stop)(int signal));

/// A shared library loaded for good (never unloaded: drivers built on LLVM abort when loaded a
/// second time after an unload). Null `handle` and `error` set when it does not load.
struct LoadedLibrary {
  void* handle = nullptr;
  std::string error;
};
LoadedLibrary load_library(const std::string& name_or_path);
/// A function exported by the program or a library it loaded (POSIX: RTLD_DEFAULT; Windows: the
/// program's own exports), or null.
void* find_loaded_symbol(const char* name);

/// The path of the shared library (or program) that holds `address`, empty when unknown.
std::string library_containing(const void* address);

/// From the first call on, watches for this process being forked (POSIX: pthread_atfork; Windows has
/// no fork). Idempotent and thread-safe. OpenCL drivers keep threads and locks that a forked child
/// does not inherit, so the library calls this when it first touches OpenCL.
void watch_for_fork();
/// True in a child forked (by any code) after watch_for_fork() ran in its parent or in itself.
bool forked_after_watch();

/// The running program's own path.
std::filesystem::path current_executable();
/// Seconds since this process was created (the loading before main() included), when known.
std::optional<double> process_age_seconds();

}  // namespace anycl::detail::platform
