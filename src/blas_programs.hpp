// CLBlast keeps every program it compiled in a process-wide cache keyed by context, each holding a
// reference to its context. Releasing them when the last Runtime goes keeps contexts from living
// until exit (where library teardown order can crash a driver; seen with Oclgrind).
#pragma once

namespace anycl::detail {

/// Empties CLBlast's program cache. Call only when no Runtime is alive.
void release_clblast_programs() noexcept;

}  // namespace anycl::detail
