// Reading an input file whole, safely: regular files only (a FIFO, a device or a folder is refused
// with its path, never waited on or read without end), and never more bytes than a cap the caller
// takes from the format (docs/guarantees.md).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace anycl {

/// Limits for the file kinds anycl reads whole; far above any real file, far below memory.
inline constexpr uint64_t kMaxModelFileBytes = uint64_t{4} << 30;
inline constexpr uint64_t kMaxCheckpointBytes = uint64_t{16} << 30;
inline constexpr uint64_t kMaxTextFileBytes = uint64_t{64} << 20;

/// The bytes of the regular file `path`, which must hold at most `max_bytes`. `what` names the
/// kind of file in messages ("model file"). DataError naming the path when it is missing (a dangling
/// or looping link says so), not a regular file, larger than `max_bytes`, or unreadable.
std::vector<unsigned char> read_file_bounded(const std::filesystem::path& path, uint64_t max_bytes,
                                             std::string_view what);
/// As read_file_bounded, as text.
std::string read_text_file_bounded(const std::filesystem::path& path, uint64_t max_bytes,
                                   std::string_view what);
/// Checks that `path` names a regular file that can be opened (what read_file_bounded checks
/// first), without reading it; DataError otherwise. Returns its size.
uint64_t check_input_file(const std::filesystem::path& path, std::string_view what);

}  // namespace anycl
