// What the hostile-file tests plant, on each system: FIFOs (POSIX only), a character device,
// symbolic links (Windows: only with the privilege or developer mode), a process id that is free.
#pragma once

#include <cstdint>
#include <string>

namespace anycl::test {

/// Creates a FIFO at `path`; false where the file system has none (Windows).
bool make_fifo(const std::string& path);
/// Opens the FIFO `path` for writing and closes it again, so that a reader blocked opening it
/// returns (and then reads the end of the data); true when a reader had it open. False on Windows.
bool wake_fifo_reader(const std::string& path);
/// A character device every system has: /dev/zero (POSIX) or NUL (Windows).
std::string character_device();
/// Whether this process may create symbolic links in `folder` (always on POSIX).
bool can_make_symlinks(const std::string& folder);
/// The id of a process that has exited, so that no process runs under it now.
int64_t dead_process_id();

}  // namespace anycl::test
