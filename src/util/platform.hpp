// The one place anycl calls the operating system for files, the environment and process ids:
// opening without blocking or following links, fsync, atomic replace. platform_posix.cpp and
// platform_windows.cpp implement it (file_type.cpp the one part that calls no system: describe);
// process.hpp has child processes, signals and libraries.
// Errors come back as std::error_code (generic_category where a POSIX errno fits) to be worded.
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <system_error>

namespace anycl::detail::platform {

/// An open file; closed when it dies. Move-only.
class File {
 public:
  File() = default;
  explicit File(intptr_t handle) : handle_(handle) {}
  File(File&& other) noexcept : handle_(other.handle_) { other.handle_ = -1; }
  File& operator=(File&& other) noexcept;
  File(const File&) = delete;
  File& operator=(const File&) = delete;
  ~File();
  bool is_open() const { return handle_ >= 0; }
  intptr_t handle() const { return handle_; }
  /// Closes now; the error a deferred write reports at close comes back here.
  std::error_code close();

 private:
  intptr_t handle_ = -1;
};

/// What an open file is: its type and size in bytes (of the file itself, not of what its path
/// names by now).
struct FileInfo {
  std::filesystem::file_type type = std::filesystem::file_type::unknown;
  uint64_t size = 0;
};

/// Opens an existing file for reading; never blocks, even on a FIFO with no writer.
File open_for_reading(const std::filesystem::path& path, std::error_code& ec);
/// Type and size of an open file.
FileInfo info(const File& file, std::error_code& ec);
/// Reads up to `size` bytes; fewer only at the end of the file (retries interrupted reads).
size_t read(const File& file, void* data, size_t size, std::error_code& ec);
/// Creates `path` for writing, exclusively (an existing name, a link included, is an error: EEXIST)
/// and without following a link; mode rw-r--r-- before the umask.
File create_exclusive(const std::filesystem::path& path, std::error_code& ec);
/// Writes all `size` bytes (retries short and interrupted writes).
void write(const File& file, const void* data, size_t size, std::error_code& ec);
/// Makes the file's contents durable (fsync).
void sync(const File& file, std::error_code& ec);
/// Makes the folder's entries (a rename into it) durable; best effort, nothing is lost when it fails.
void sync_folder(const std::filesystem::path& folder);
/// Renames `from` to `to`, replacing `to` atomically when it exists (readers see one or the other).
void rename_replacing(const std::filesystem::path& from, const std::filesystem::path& to,
                      std::error_code& ec);
/// "a directory", "a FIFO (named pipe)", "a character device"…: what a file of type `t` is, for messages.
const char* describe(std::filesystem::file_type t);
/// Creates a new folder `<parent>/<prefix><random>` that only this user may enter (POSIX mkdtemp;
/// Windows: a fresh name created exclusively) and returns its path; empty with `ec` set on failure.
std::filesystem::path create_private_folder(const std::filesystem::path& parent, const std::string& prefix,
                                            std::error_code& ec);
/// Whether this process may create files in the existing folder `folder` (POSIX: write and search
/// permission; Windows: a folder that is not read-only — its ACLs are only checked by writing).
bool folder_is_writable(const std::filesystem::path& folder);
/// What a program's file name ends with: ".exe" on Windows, "" elsewhere.
#ifdef _WIN32
inline constexpr const char* kProgramSuffix = ".exe";
#else
inline constexpr const char* kProgramSuffix = "";
#endif
/// The environment variable `name` (UTF-8), or nothing when it is not set.
std::optional<std::string> get_env(const char* name);
/// Sets (or, with no value, removes) the environment variable `name` for this process and its children.
void set_env(const char* name, const std::optional<std::string>& value);
/// Whether standard error is a terminal (a console on Windows), for live progress lines.
bool stderr_is_terminal();
/// This process's id.
int64_t process_id();
/// False only when no process `pid` exists (a process we may not signal counts as existing).
bool process_exists(int64_t pid);

}  // namespace anycl::detail::platform
