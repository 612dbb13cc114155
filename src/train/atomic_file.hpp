// Writing a file so that readers see the old version or the new one, never half of one:
// temporary file in the same folder, fsync, rename, fsync of the folder.
#pragma once

#include <string>
#include <vector>

namespace anycl::detail {

/// Replaces `path` with `bytes` atomically; throws Error naming the path on failure and leaves
/// no temporary file behind.
void write_file_atomically(const std::string& path, const std::vector<unsigned char>& bytes);

}  // namespace anycl::detail
