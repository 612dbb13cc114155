// Whether CLBlast can be called. A Windows build may link clblast.dll delay-loaded
// (ANYCL_CLBLAST_DELAY_LOAD): anycl.dll then loads without it, and every way into CLBlast asks here
// first, so a missing clblast.dll is an anycl::Error that names it, not a crash inside the loader.
#pragma once

#include <string>

namespace anycl::detail {

/// Empty when CLBlast can be called; otherwise why not and what to do. Delay-loaded: loads the DLL
/// once (it stays loaded); linked the ordinary way (every other build) always empty.
const std::string& clblast_missing() noexcept;
/// Throws anycl::Error naming `call` when CLBlast cannot be called (clblast_missing()).
void require_clblast(const char* call);

}  // namespace anycl::detail
