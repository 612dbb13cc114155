// Windows implementation of the platform layer: wide-character (UTF-16) calls, CREATE_NEW without
// following reparse points (links), FlushFileBuffers, MoveFileExW with WRITE_THROUGH.
#ifdef _WIN32
#include "platform.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <random>

#include "windows_text.hpp"

namespace anycl::detail::platform {
namespace fs = std::filesystem;
namespace {

HANDLE handle_of(const File& f) { return reinterpret_cast<HANDLE>(f.handle()); }
intptr_t to_handle(HANDLE h) { return h == INVALID_HANDLE_VALUE ? -1 : reinterpret_cast<intptr_t>(h); }

}  // namespace

File& File::operator=(File&& other) noexcept {
  if (this != &other) {
    close();
    handle_ = other.handle_;
    other.handle_ = -1;
  }
  return *this;
}

File::~File() { close(); }

std::error_code File::close() {
  if (handle_ < 0) return {};
  const BOOL ok = CloseHandle(reinterpret_cast<HANDLE>(handle_));
  handle_ = -1;
  return ok ? std::error_code() : last_windows_error();
}

File open_for_reading(const fs::path& path, std::error_code& ec) {
  ec.clear();
  // Sharing delete: a writer may replace the file while we read it (we keep the old version).
  // BACKUP_SEMANTICS lets a folder open, so that the caller can say it is one. A named pipe with
  // no server fails to open rather than waiting.
  const HANDLE h =
      CreateFileW(path.c_str(), GENERIC_READ, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
                  OPEN_EXISTING, FILE_ATTRIBUTE_NORMAL | FILE_FLAG_BACKUP_SEMANTICS, nullptr);
  if (h == INVALID_HANDLE_VALUE) ec = last_windows_error();
  return File(to_handle(h));
}

FileInfo info(const File& file, std::error_code& ec) {
  ec.clear();
  const HANDLE h = handle_of(file);
  switch (GetFileType(h)) {
    case FILE_TYPE_CHAR:
      return {fs::file_type::character, 0};
    case FILE_TYPE_PIPE:
      return {fs::file_type::fifo, 0};
    case FILE_TYPE_DISK:
      break;
    default:
      if (GetLastError() != NO_ERROR) {
        ec = last_windows_error();
        return {};
      }
      return {fs::file_type::unknown, 0};
  }
  BY_HANDLE_FILE_INFORMATION bhfi{};
  if (!GetFileInformationByHandle(h, &bhfi)) {
    ec = last_windows_error();
    return {};
  }
  const uint64_t size = (uint64_t(bhfi.nFileSizeHigh) << 32) | bhfi.nFileSizeLow;
  if (bhfi.dwFileAttributes & FILE_ATTRIBUTE_DIRECTORY) return {fs::file_type::directory, size};
  if (bhfi.dwFileAttributes & FILE_ATTRIBUTE_REPARSE_POINT) return {fs::file_type::symlink, size};
  return {fs::file_type::regular, size};
}

size_t read(const File& file, void* data, size_t size, std::error_code& ec) {
  ec.clear();
  size_t done = 0;
  while (done < size) {
    const DWORD want = DWORD(std::min<size_t>(size - done, 1u << 30));
    DWORD got = 0;
    if (!ReadFile(handle_of(file), static_cast<char*>(data) + done, want, &got, nullptr)) {
      if (GetLastError() == ERROR_BROKEN_PIPE || GetLastError() == ERROR_HANDLE_EOF) break;
      ec = last_windows_error();
      break;
    }
    if (got == 0) break;
    done += got;
  }
  return done;
}

File create_exclusive(const fs::path& path, std::error_code& ec) {
  ec.clear();
  // CREATE_NEW fails on any existing name, a link or junction included; OPEN_REPARSE_POINT makes
  // sure no reparse point is ever followed. No sharing: nobody else opens our temporary.
  const HANDLE h = CreateFileW(path.c_str(), GENERIC_WRITE, 0, nullptr, CREATE_NEW,
                               FILE_ATTRIBUTE_NORMAL | FILE_FLAG_OPEN_REPARSE_POINT, nullptr);
  if (h == INVALID_HANDLE_VALUE) ec = last_windows_error();
  return File(to_handle(h));
}

void write(const File& file, const void* data, size_t size, std::error_code& ec) {
  ec.clear();
  size_t done = 0;
  while (done < size) {
    const DWORD want = DWORD(std::min<size_t>(size - done, 1u << 30));
    DWORD wrote = 0;
    if (!WriteFile(handle_of(file), static_cast<const char*>(data) + done, want, &wrote, nullptr)) {
      ec = last_windows_error();
      return;
    }
    if (wrote == 0) {
      ec = std::make_error_code(std::errc::no_space_on_device);
      return;
    }
    done += wrote;
  }
}

void sync(const File& file, std::error_code& ec) {
  ec.clear();
  if (!FlushFileBuffers(handle_of(file))) ec = last_windows_error();
}

// MOVEFILE_WRITE_THROUGH returns only once the rename is on disk: nothing more to flush.
void sync_folder(const fs::path&) {}

void rename_replacing(const fs::path& from, const fs::path& to, std::error_code& ec) {
  // While another process or thread replaces or reads `to` (without FILE_SHARE_DELETE), Windows
  // refuses with access denied or a sharing violation for a moment: retry for up to about a second.
  for (int attempt = 0;; ++attempt) {
    ec.clear();
    if (MoveFileExW(from.c_str(), to.c_str(), MOVEFILE_REPLACE_EXISTING | MOVEFILE_WRITE_THROUGH)) return;
    const DWORD error = GetLastError();
    ec = windows_error(error);
    if ((error != ERROR_ACCESS_DENIED && error != ERROR_SHARING_VIOLATION) || attempt == 100) return;
    Sleep(DWORD(1 + attempt / 10));
  }
}

fs::path create_private_folder(const fs::path& parent, const std::string& prefix, std::error_code& ec) {
  // A folder inherits its parent's ACL: under the user's own temporary folder that is private.
  std::random_device random;
  for (int attempt = 0; attempt < 16; ++attempt) {
    char suffix[17];
    std::snprintf(suffix, sizeof suffix, "%08x%08x", unsigned(random()), unsigned(random()));
    const fs::path candidate = parent / (prefix + suffix);
    if (CreateDirectoryW(candidate.c_str(), nullptr)) {
      ec.clear();
      return candidate;
    }
    ec = last_windows_error();
    if (ec != std::errc::file_exists) return {};
  }
  return {};
}

bool folder_is_writable(const fs::path& folder) {
  const DWORD attributes = GetFileAttributesW(folder.c_str());
  return attributes != INVALID_FILE_ATTRIBUTES && (attributes & FILE_ATTRIBUTE_DIRECTORY) &&
         !(attributes & FILE_ATTRIBUTE_READONLY);
}

std::optional<std::string> get_env(const char* name) {
  const std::wstring wide_name = widen(name);
  const DWORD n = GetEnvironmentVariableW(wide_name.c_str(), nullptr, 0);
  if (n == 0) return std::nullopt;
  std::wstring value(n, L'\0');
  const DWORD got = GetEnvironmentVariableW(wide_name.c_str(), value.data(), n);
  value.resize(got);
  return narrow(value);
}

void set_env(const char* name, const std::optional<std::string>& value) {
  // Through the C runtime, so that its copy (std::getenv) and the process's (children) agree.
  const std::wstring wide_name = widen(name);
  _wputenv_s(wide_name.c_str(), value ? widen(*value).c_str() : L"");
}

bool stderr_is_terminal() {
  DWORD mode = 0;
  return GetConsoleMode(GetStdHandle(STD_ERROR_HANDLE), &mode) != 0;
}

int64_t process_id() { return int64_t(GetCurrentProcessId()); }

bool process_exists(int64_t pid) {
  if (pid <= 0 || pid > int64_t(UINT32_MAX)) return false;
  const HANDLE h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE, DWORD(pid));
  if (!h) return GetLastError() != ERROR_INVALID_PARAMETER;  // access denied: it exists
  DWORD code = 0;
  const bool running = GetExitCodeProcess(h, &code) && code == STILL_ACTIVE;
  CloseHandle(h);
  return running;
}

}  // namespace anycl::detail::platform
#endif  // _WIN32
