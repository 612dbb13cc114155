// JSON string escaping for the command's --json outputs: the library's helper (src/util/json_string.hpp).
#pragma once

#include "util/json_string.hpp"

namespace anycl::cli {

using anycl::detail::json_string;

}  // namespace anycl::cli
