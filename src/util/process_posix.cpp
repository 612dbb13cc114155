// POSIX implementation of process.hpp: posix_spawn, sigaction, dlopen, /proc (Linux) for the age.
#ifndef _WIN32
#include "process.hpp"

#include <dlfcn.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "anycl/error.hpp"
#ifdef __APPLE__
#include <mach-o/dyld.h>
#endif

extern char** environ;  // POSIX: the process's environment (unistd.h declares it only on request)

namespace anycl::detail::platform {
namespace {

ProcessExit decode(int status) {
  ProcessExit e;
  if (WIFSIGNALED(status)) e.signal = WTERMSIG(status);
  if (WIFEXITED(status)) e.code = WEXITSTATUS(status);
  return e;
}

// posix_spawn, not fork + exec: the library starts children (the tuning worker) from applications
// with threads of their own (Python, OpenCL drivers), where a forked child may only call
// async-signal-safe functions before exec — building its argv and environment there could deadlock
// on a lock another thread held. Everything is prepared here, in the parent.
pid_t start(const ProcessSpec& spec, int out_fd) {
  if (spec.args.empty()) throw Error("cannot start a child process: no program given");
  std::vector<std::string> environment;
  for (char** e = environ; e && *e; ++e) {
    const std::string entry = *e;
    const std::string name = entry.substr(0, entry.find('='));
    bool replaced = false;
    for (const auto& [n, v] : spec.env) replaced = replaced || n == name;
    if (!replaced) environment.push_back(entry);
  }
  for (const auto& [name, value] : spec.env) environment.push_back(name + "=" + value);
  std::vector<char*> argv, envp;
  for (const auto& a : spec.args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  for (auto& e : environment) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  if (out_fd >= 0) {
    posix_spawn_file_actions_adddup2(&actions, out_fd, STDOUT_FILENO);
    posix_spawn_file_actions_adddup2(&actions, out_fd, STDERR_FILENO);
  }
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t pid = -1;
  const int error = ::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) throw Error(fmt::format("cannot start {}: {}", spec.args[0], std::strerror(error)));
  return pid;
}

ProcessExit wait_for(pid_t pid) {
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  ProcessExit e = decode(status);
  e.pid = pid;
  return e;
}

}  // namespace

ProcessExit run_process(const ProcessSpec& spec, std::string* output) {
  if (!output) return wait_for(start(spec, -1));
  int fds[2];
  if (::pipe(fds) != 0)
    throw Error(fmt::format("cannot start {}: {}", spec.args.at(0), std::strerror(errno)));
  ::fcntl(fds[0], F_SETFD, FD_CLOEXEC);
  pid_t pid = -1;
  try {
    pid = start(spec, fds[1]);
  } catch (...) {
    ::close(fds[0]);
    ::close(fds[1]);
    throw;
  }
  ::close(fds[1]);
  std::array<char, 4096> buffer{};
  for (;;) {
    const ssize_t n = ::read(fds[0], buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    output->append(buffer.data(), size_t(n));
  }
  ::close(fds[0]);
  return wait_for(pid);
}

BackgroundProcess::BackgroundProcess(const ProcessSpec& spec, const std::filesystem::path& log) {
  const int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw Error(fmt::format("cannot create '{}': {}", log.string(), std::strerror(errno)));
  try {
    handle_ = intptr_t(start(spec, fd));
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
}

BackgroundProcess::~BackgroundProcess() {
  if (!exit_) {
    ::kill(pid_t(handle_), SIGKILL);
    wait();
  }
}

void BackgroundProcess::stop(int signal) const { ::kill(pid_t(handle_), signal); }

ProcessExit BackgroundProcess::wait() {
  if (!exit_) exit_ = wait_for(pid_t(handle_));
  return *exit_;
}

std::string signal_name(int signal) {
  switch (signal) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGKILL:
      return "SIGKILL";
    case SIGSEGV:
      return "SIGSEGV";
    case SIGABRT:
      return "SIGABRT";
    case SIGBUS:
      return "SIGBUS";
    case SIGILL:
      return "SIGILL";
    case SIGFPE:
      return "SIGFPE";
    default:
      return fmt::format("signal {}", signal);
  }
}

namespace {
std::atomic<bool> forked{false};  // set in the child by the atfork handler (async-signal-safe store)
void mark_forked() { forked.store(true); }
}  // namespace

void watch_for_fork() {
  static const int registered = ::pthread_atfork(nullptr, nullptr, mark_forked);  // once, thread-safe
  (void)registered;
}

bool forked_after_watch() { return forked.load(); }

void install_stop_handler(void (*on_stop)(int signal)) {
  struct sigaction action = {};
  action.sa_handler = on_stop;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESETHAND;  // a second Ctrl-C ends the process at once
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

LoadedLibrary load_library(const std::string& name_or_path) {
  LoadedLibrary lib;
  lib.handle = ::dlopen(name_or_path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NODELETE);
  if (!lib.handle) {
    const char* why = ::dlerror();
    lib.error = why ? why : "unknown error";
  }
  return lib;
}

void* find_loaded_symbol(const char* name) { return ::dlsym(RTLD_DEFAULT, name); }

std::string library_containing(const void* address) {
  Dl_info where{};
  if (::dladdr(const_cast<void*>(address), &where) && where.dli_fname) return where.dli_fname;
  return "";
}

std::filesystem::path current_executable() {
#ifdef __APPLE__
  uint32_t size = 0;
  _NSGetExecutablePath(nullptr, &size);
  std::string path(size, '\0');
  if (_NSGetExecutablePath(path.data(), &size) != 0) throw Error("cannot find this program's path");
  return std::filesystem::canonical(path.c_str());
#else
  std::error_code ec;
  auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error("cannot find this program (/proc/self/exe): " + ec.message());
  return path;
#endif
}

std::optional<double> process_age_seconds() {
#ifdef __linux__
  // /proc/self/stat field 22: the start in clock ticks since boot; CLOCK_BOOTTIME counts from there.
  std::ifstream in("/proc/self/stat");
  const std::string stat((std::istreambuf_iterator<char>(in)), {});
  const auto paren = stat.rfind(')');  // the command name may hold spaces: fields follow its ')'
  if (paren == std::string::npos) return std::nullopt;
  std::istringstream fields(stat.substr(paren + 2));
  std::string field;
  for (int i = 3; i < 22 && fields >> field;) ++i;  // fields 3…21
  unsigned long long ticks = 0;
  const long hz = ::sysconf(_SC_CLK_TCK);
  if (!(fields >> ticks) || hz <= 0) return std::nullopt;
  timespec ts{};
  ::clock_gettime(CLOCK_BOOTTIME, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9 - double(ticks) / double(hz);
#else
  return std::nullopt;
#endif
}

}  // namespace anycl::detail::platform
#endif  // !_WIN32
