// Opening an input file once and checking what was opened (not what its path names a moment
// later): the first step of every reader of user-given files (bounded_read.cpp implements it).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string_view>

#include "platform.hpp"

namespace anycl::detail {

/// Opens `path` without blocking, refuses anything but a regular file of at most `max_bytes` (the
/// check is on the opened file), and returns it with its size in `*size`. DataError naming the path
/// and what to do otherwise; `what` names the kind of file ("IDX file").
platform::File open_input_file(const std::filesystem::path& path, uint64_t max_bytes, std::string_view what,
                               uint64_t* size);

}  // namespace anycl::detail
