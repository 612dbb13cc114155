// Windows implementation of process.hpp: CreateProcessW (a command line quoted the way the C
// runtime splits it), SetConsoleCtrlHandler, LoadLibraryW, GetProcessTimes.
#ifdef _WIN32
#include "process.hpp"

#include <fmt/format.h>

#include <array>
#include <atomic>
#include <csignal>
#include <cwctype>

#include "anycl/error.hpp"
#include "windows_text.hpp"

namespace anycl::detail::platform {
namespace {

// One argument quoted for CommandLineToArgvW and the C runtime: backslashes are literal except
// before a quote, where they are doubled.
std::wstring quote(const std::wstring& arg) {
  if (!arg.empty() && arg.find_first_of(L" \t\n\v\"") == std::wstring::npos) return arg;
  std::wstring q = L"\"";
  size_t backslashes = 0;
  for (wchar_t c : arg) {
    if (c == L'\\') {
      ++backslashes;
      continue;
    }
    q.append(c == L'"' ? 2 * backslashes + 1 : backslashes, L'\\');
    backslashes = 0;
    q += c;
  }
  q.append(2 * backslashes, L'\\');
  return q + L"\"";
}

std::wstring command_line(const ProcessSpec& spec) {
  std::wstring line;
  for (const auto& a : spec.args) line += (line.empty() ? L"" : L" ") + quote(widen(a));
  return line;
}

bool same_name(const std::wstring& entry, const std::wstring& name) {
  if (entry.size() <= name.size() || entry[name.size()] != L'=') return false;
  for (size_t i = 0; i < name.size(); ++i)
    if (std::towupper(entry[i]) != std::towupper(name[i])) return false;
  return true;
}

// Our environment with `spec.env` added or replaced (names compare case-insensitively).
std::wstring environment_block(const ProcessSpec& spec) {
  std::vector<std::wstring> entries;
  if (wchar_t* block = GetEnvironmentStringsW()) {
    for (const wchar_t* p = block; *p; p += wcslen(p) + 1) entries.emplace_back(p);
    FreeEnvironmentStringsW(block);
  }
  for (const auto& [name, value] : spec.env) {
    const std::wstring wide_name = widen(name);
    std::vector<std::wstring> kept;
    for (auto& e : entries)
      if (!same_name(e, wide_name)) kept.push_back(std::move(e));
    entries = std::move(kept);
    entries.push_back(wide_name + L"=" + widen(value));
  }
  std::wstring block;
  for (const auto& e : entries) block += e + L'\0';
  return block + L'\0';
}

ProcessExit decode(DWORD code) {
  ProcessExit e;
  switch (code) {
    case 0xC000013A:  // STATUS_CONTROL_C_EXIT
      e.signal = SIGINT;
      break;
    case 0xC0000005:  // access violation
    case 0xC00000FD:  // stack overflow
      e.signal = SIGSEGV;
      break;
    case 0xC000001D:  // illegal instruction
      e.signal = SIGILL;
      break;
    case 0xC0000094:  // integer division by zero
    case 0xC000008E:  // float division by zero
      e.signal = SIGFPE;
      break;
    case 0xC0000409:  // fast fail, abort()
      e.signal = SIGABRT;
      break;
    default:
      e.code = int(code);
  }
  return e;
}

// Starts `spec` with standard output and error on `out` (inherited) when given.
HANDLE start(const ProcessSpec& spec, HANDLE out, DWORD flags) {
  if (spec.args.empty()) throw Error("cannot start a child process: no program given");
  std::fflush(stdout);
  std::fflush(stderr);
  std::wstring line = command_line(spec);
  std::wstring env = environment_block(spec);
  STARTUPINFOW si{};
  si.cb = sizeof si;
  if (out) {
    si.dwFlags = STARTF_USESTDHANDLES;
    si.hStdInput = GetStdHandle(STD_INPUT_HANDLE);
    si.hStdOutput = out;
    si.hStdError = out;
  }
  PROCESS_INFORMATION pi{};
  if (!CreateProcessW(widen(spec.args[0]).c_str(), line.data(), nullptr, nullptr, out ? TRUE : FALSE,
                      flags | CREATE_UNICODE_ENVIRONMENT, env.data(), nullptr, &si, &pi))
    throw Error(fmt::format("cannot start {}: {}", spec.args[0], last_windows_error().message()));
  CloseHandle(pi.hThread);
  return pi.hProcess;
}

ProcessExit wait_for(HANDLE process) {
  WaitForSingleObject(process, INFINITE);
  DWORD code = 0;
  GetExitCodeProcess(process, &code);
  ProcessExit e = decode(code);
  e.pid = int64_t(GetProcessId(process));
  return e;
}

std::atomic<void (*)(int)> g_on_stop{nullptr};
std::atomic<int> g_stops{0};

BOOL WINAPI on_console_event(DWORD event) {
  if (g_stops.fetch_add(1) > 0) return FALSE;  // the second request: the default handler ends us
  if (auto on_stop = g_on_stop.load()) on_stop(event == CTRL_C_EVENT ? SIGINT : SIGTERM);
  return TRUE;
}

}  // namespace

ProcessExit run_process(const ProcessSpec& spec, std::string* output) {
  if (!output) {
    const HANDLE process = start(spec, nullptr, 0);
    const ProcessExit e = wait_for(process);
    CloseHandle(process);
    return e;
  }
  SECURITY_ATTRIBUTES inherit{sizeof(SECURITY_ATTRIBUTES), nullptr, TRUE};
  HANDLE read_end = nullptr, write_end = nullptr;
  if (!CreatePipe(&read_end, &write_end, &inherit, 0))
    throw Error(fmt::format("cannot start {}: {}", spec.args.at(0), last_windows_error().message()));
  SetHandleInformation(read_end, HANDLE_FLAG_INHERIT, 0);
  HANDLE process = nullptr;
  try {
    process = start(spec, write_end, 0);
  } catch (...) {
    CloseHandle(read_end);
    CloseHandle(write_end);
    throw;
  }
  CloseHandle(write_end);
  std::array<char, 4096> buffer{};
  DWORD n = 0;
  while (ReadFile(read_end, buffer.data(), DWORD(buffer.size()), &n, nullptr) && n > 0)
    output->append(buffer.data(), n);
  CloseHandle(read_end);
  const ProcessExit e = wait_for(process);
  CloseHandle(process);
  return e;
}

BackgroundProcess::BackgroundProcess(const ProcessSpec& spec, const std::filesystem::path& log) {
  SECURITY_ATTRIBUTES inherit{sizeof(SECURITY_ATTRIBUTES), nullptr, TRUE};
  const HANDLE out = CreateFileW(log.c_str(), GENERIC_WRITE, FILE_SHARE_READ | FILE_SHARE_DELETE, &inherit,
                                 CREATE_ALWAYS, FILE_ATTRIBUTE_NORMAL, nullptr);
  if (out == INVALID_HANDLE_VALUE)
    throw Error(fmt::format("cannot create '{}': {}", log.string(), last_windows_error().message()));
  try {
    // A process group of its own, so that a Ctrl-Break can be sent to it alone.
    handle_ = reinterpret_cast<intptr_t>(start(spec, out, CREATE_NEW_PROCESS_GROUP));
  } catch (...) {
    CloseHandle(out);
    throw;
  }
  CloseHandle(out);
}

BackgroundProcess::~BackgroundProcess() {
  if (!exit_) {
    TerminateProcess(reinterpret_cast<HANDLE>(handle_), 1);
    wait();
  }
  CloseHandle(reinterpret_cast<HANDLE>(handle_));
}

void BackgroundProcess::stop(int signal) const {
  const HANDLE process = reinterpret_cast<HANDLE>(handle_);
  if (signal == SIGINT || signal == SIGTERM)
    GenerateConsoleCtrlEvent(CTRL_BREAK_EVENT, GetProcessId(process));
  else
    TerminateProcess(process, 0xC000013A);
}

ProcessExit BackgroundProcess::wait() {
  if (!exit_) exit_ = wait_for(reinterpret_cast<HANDLE>(handle_));
  return *exit_;
}

std::string signal_name(int signal) {
  switch (signal) {
    case SIGINT:
      return "SIGINT";
    case SIGTERM:
      return "SIGTERM";
    case SIGSEGV:
      return "SIGSEGV";
    case SIGABRT:
      return "SIGABRT";
    case SIGILL:
      return "SIGILL";
    case SIGFPE:
      return "SIGFPE";
    default:
      return fmt::format("signal {}", signal);
  }
}

// Windows has no fork: a child process starts afresh, so there is nothing to watch.
void watch_for_fork() {}

bool forked_after_watch() { return false; }

void install_stop_handler(void (*on_stop)(int signal)) {
  g_on_stop = on_stop;
  SetConsoleCtrlHandler(on_console_event, TRUE);
}

LoadedLibrary load_library(const std::string& name_or_path) {
  LoadedLibrary lib;
  lib.handle = reinterpret_cast<void*>(LoadLibraryW(widen(name_or_path).c_str()));
  if (!lib.handle) lib.error = last_windows_error().message();
  return lib;
}

void* find_loaded_symbol(const char* name) {
  return reinterpret_cast<void*>(GetProcAddress(GetModuleHandleW(nullptr), name));
}

std::string library_containing(const void* address) {
  HMODULE module = nullptr;
  if (!GetModuleHandleExW(
          GET_MODULE_HANDLE_EX_FLAG_FROM_ADDRESS | GET_MODULE_HANDLE_EX_FLAG_UNCHANGED_REFCOUNT,
          static_cast<LPCWSTR>(address), &module))
    return "";
  std::wstring path(MAX_PATH, L'\0');
  const DWORD n = GetModuleFileNameW(module, path.data(), DWORD(path.size()));
  return n ? narrow(path.substr(0, n)) : std::string();
}

std::filesystem::path current_executable() {
  std::wstring path(MAX_PATH, L'\0');
  for (;;) {
    const DWORD n = GetModuleFileNameW(nullptr, path.data(), DWORD(path.size()));
    if (n == 0) throw Error("cannot find this program's path: " + last_windows_error().message());
    if (n < path.size()) return std::filesystem::path(path.substr(0, n));
    path.resize(path.size() * 2);
  }
}

std::optional<double> process_age_seconds() {
  FILETIME created{}, exited{}, kernel{}, user{}, now{};
  if (!GetProcessTimes(GetCurrentProcess(), &created, &exited, &kernel, &user)) return std::nullopt;
  GetSystemTimeAsFileTime(&now);
  auto ticks = [](const FILETIME& t) { return (uint64_t(t.dwHighDateTime) << 32) | t.dwLowDateTime; };
  return double(int64_t(ticks(now) - ticks(created))) * 1e-7;  // 100 ns units
}

}  // namespace anycl::detail::platform
#endif  // _WIN32
