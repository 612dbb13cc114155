# fmt for a build whose compiler or standard library is not the one Debian's libfmt was built with
# (clang + libc++ in tools/run-sanitizers.sh, mingw-w64 in tools/check-windows.sh): fmt's headers,
# and its implementation compiled once into a static library of this build (-Dfmt_DIR=<this folder>).
# Header-only fmt compiled the implementation into every file that formats: 2.5x the build time.
#   ANYCL_FMT_INCLUDE_DIR  where fmt/*.h are, when not on the compiler's own include path
if(NOT TARGET fmt::fmt)
  add_library(anycl_fmt STATIC "${CMAKE_CURRENT_LIST_DIR}/fmt_implementation.cpp")
  set_target_properties(anycl_fmt PROPERTIES POSITION_INDEPENDENT_CODE ON)
  if(ANYCL_FMT_INCLUDE_DIR)
    target_include_directories(anycl_fmt SYSTEM PUBLIC "${ANYCL_FMT_INCLUDE_DIR}")
  endif()
  add_library(fmt::fmt ALIAS anycl_fmt)
endif()
