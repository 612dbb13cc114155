// Finding CLBlast at run time (clblast_library.hpp). With clblast.dll delay-loaded (CMake defines
// ANYCL_CLBLAST_DLL, the DLL's name) a LoadLibrary before the first CLBlast call, so that the
// delay-load helper never fails; linked the ordinary way, the program did not start without it.
#include "blas/clblast_library.hpp"

#include "anycl/error.hpp"
#include "util/process.hpp"

namespace anycl::detail {

const std::string& clblast_missing() noexcept {
#if defined(_WIN32) && defined(ANYCL_CLBLAST_DLL)
  // The name the import library records (cmake/clblast_delay_load.cmake reads it), so this finds
  // the file the delay-load helper would: the same name, the same search order.
  static const std::string why = []() -> std::string {
    try {
      const auto lib = platform::load_library(ANYCL_CLBLAST_DLL);
      if (lib.handle) return "";
      return std::string(ANYCL_CLBLAST_DLL) + " could not be loaded (" + lib.error +
             "): GEMM (Dense, Conv2D, training, prediction, tuning) needs CLBlast — put " ANYCL_CLBLAST_DLL
             " (CLBlast built by the compiler that built anycl) beside the program or in a folder on PATH";
    } catch (...) {
      return ANYCL_CLBLAST_DLL " could not be loaded (out of memory)";
    }
  }();
#else
  static const std::string why;
#endif
  return why;
}

void require_clblast(const char* call) {
  if (const std::string& why = clblast_missing(); !why.empty())
    throw UnsupportedError(std::string(call) + ": " + why);
}

}  // namespace anycl::detail
