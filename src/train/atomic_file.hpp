// Kept so that `detail::write_file_atomically` callers build unchanged: the one atomic writer lives
// in the util layer (anycl/util/atomic_file.hpp).
#pragma once

#include "anycl/util/atomic_file.hpp"

namespace anycl::detail {
using anycl::write_file_atomically;
}  // namespace anycl::detail
