# Cross-compiling anycl for 64-bit Windows with Debian's mingw-w64 (the -posix variant, whose
# libstdc++ has std::thread), and running what was built under Wine: tools/check-windows.sh.
# Dependencies the mingw-w64 sysroot lacks come from a prefix of Windows-side files that the
# script prepares under build/ and passes as -DCMAKE_FIND_ROOT_PATH=<prefix>.
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(ANYCL_MINGW_TRIPLE x86_64-w64-mingw32)
set(CMAKE_C_COMPILER ${ANYCL_MINGW_TRIPLE}-gcc-posix)
set(CMAKE_CXX_COMPILER ${ANYCL_MINGW_TRIPLE}-g++-posix)
set(CMAKE_RC_COMPILER ${ANYCL_MINGW_TRIPLE}-windres)

# Search the mingw-w64 sysroot (and the prepared prefix) only, never the host's /usr.
list(APPEND CMAKE_FIND_ROOT_PATH /usr/${ANYCL_MINGW_TRIPLE})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
set(ENV{PKG_CONFIG_LIBDIR} "/usr/${ANYCL_MINGW_TRIPLE}/lib/pkgconfig")  # no host .pc files

# Self-contained programs and DLL: libstdc++, libgcc and winpthread linked in, so Wine (or a user)
# needs no mingw DLLs beside anycl's own.
set(CMAKE_EXE_LINKER_FLAGS_INIT "-static")
set(CMAKE_SHARED_LINKER_FLAGS_INIT "-static")
# Tests (and doctest's test discovery at build time) run under Wine.
find_program(ANYCL_WINE NAMES wine64 PATHS /usr/lib/wine NO_DEFAULT_PATH)
if(ANYCL_WINE)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${ANYCL_WINE})
endif()
