// Windows only: UTF-8 <-> UTF-16 for the wide (…W) system calls, and GetLastError() as a
// std::error_code that compares equal to the std::errc values the callers test.
#pragma once
#ifdef _WIN32

#ifndef WIN32_LEAN_AND_MEAN
#define WIN32_LEAN_AND_MEAN
#endif
#ifndef NOMINMAX
#define NOMINMAX
#endif
#include <windows.h>

#include <cerrno>
#include <string>
#include <system_error>

namespace anycl::detail::platform {

inline std::wstring widen(const std::string& utf8) {
  if (utf8.empty()) return {};
  const int n = MultiByteToWideChar(CP_UTF8, 0, utf8.data(), int(utf8.size()), nullptr, 0);
  std::wstring wide(size_t(n > 0 ? n : 0), L'\0');
  if (n > 0) MultiByteToWideChar(CP_UTF8, 0, utf8.data(), int(utf8.size()), wide.data(), n);
  return wide;
}

inline std::string narrow(const std::wstring& wide) {
  if (wide.empty()) return {};
  const int n = WideCharToMultiByte(CP_UTF8, 0, wide.data(), int(wide.size()), nullptr, 0, nullptr, nullptr);
  std::string utf8(size_t(n > 0 ? n : 0), '\0');
  if (n > 0) WideCharToMultiByte(CP_UTF8, 0, wide.data(), int(wide.size()), utf8.data(), n, nullptr, nullptr);
  return utf8;
}

// The POSIX error a Windows error stands for, so that `ec == std::errc::file_exists` and the
// advice keyed on it work the same on both systems; other errors keep their Windows code.
inline std::error_code windows_error(DWORD code) {
  switch (code) {
    case ERROR_FILE_EXISTS:
    case ERROR_ALREADY_EXISTS:
      return {EEXIST, std::generic_category()};
    case ERROR_FILE_NOT_FOUND:
    case ERROR_PATH_NOT_FOUND:
    case ERROR_INVALID_NAME:
      return {ENOENT, std::generic_category()};
    case ERROR_ACCESS_DENIED:
    case ERROR_SHARING_VIOLATION:
    case ERROR_LOCK_VIOLATION:
      return {EACCES, std::generic_category()};
    case ERROR_DISK_FULL:
    case ERROR_HANDLE_DISK_FULL:
      return {ENOSPC, std::generic_category()};
    case ERROR_WRITE_PROTECT:
      return {EROFS, std::generic_category()};
    case ERROR_DIRECTORY:
      return {ENOTDIR, std::generic_category()};
    case ERROR_CANT_RESOLVE_FILENAME:  // a link that loops
      return {ELOOP, std::generic_category()};
    default:
      return {int(code), std::system_category()};
  }
}

inline std::error_code last_windows_error() { return windows_error(GetLastError()); }

}  // namespace anycl::detail::platform

#endif  // _WIN32
