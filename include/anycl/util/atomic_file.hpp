// Writing a file so that readers see the old version or the new one, never half of one, and so
// that nothing but the named file can be written: every model, checkpoint, export, tuning file,
// cache entry, metrics file and plot goes through here (docs/guarantees.md).
#pragma once

#include <cstddef>
#include <filesystem>
#include <string_view>
#include <vector>

namespace anycl {

/// Replaces `path` with `size` bytes atomically: a temporary with a unique name in the same folder,
/// created exclusively without following links, fsync, rename, fsync of the folder. Refuses (Error
/// naming the path) an existing `path` that is not a regular file (a device, a folder, a FIFO, a
/// link to one); removes the temporaries of `path` left by processes that no longer run. On failure
/// the old file is untouched and no temporary is left.
void write_file_atomically(const std::filesystem::path& path, const void* data, size_t size);
/// As above, for a byte vector.
void write_file_atomically(const std::filesystem::path& path, const std::vector<unsigned char>& bytes);
/// As above, for text.
void write_file_atomically(const std::filesystem::path& path, std::string_view text);

/// Checks, before any work, that `path` can be an output: its folder exists and takes a new file
/// (a temporary is created there and removed), and `path` is absent or a regular file. Error naming
/// the path and what to do otherwise.
void check_output_file(const std::filesystem::path& path);
/// Refuses (ValidationError) an `output` that is the same file as `input`, so a failed write can
/// never cost the input.
void check_output_is_not_input(const std::filesystem::path& input, const std::filesystem::path& output);

/// True when `name` is the name of a temporary this module creates for `target_name`
/// ("<target_name>.tmp.<pid>.<16 hex digits>"); `pid` receives the writer's process id.
bool is_temporary_name(std::string_view name, std::string_view target_name, long long* pid = nullptr);
/// Removes the temporaries of `path` whose writing process no longer runs; returns how many.
size_t remove_stale_temporaries(const std::filesystem::path& path);

}  // namespace anycl
