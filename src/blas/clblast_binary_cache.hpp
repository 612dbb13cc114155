// CLBlast 1.5 keeps the binary of every program it compiles in a process-wide cache (its private
// BinaryCache: platform, precision, routine with its parameters, device name → binary) and looks
// there before it compiles; it offers no public way in or out. This seam reaches that cache through
// the symbols libclblast exports for it, found at run time: where they are absent (another CLBlast,
// another standard library, Windows) every call answers false and CLBlast compiles as it always
// does. Like clblast_params.cpp it is compiled against CLBlast's own standard library; only plain C
// types cross it.
#pragma once

#include <cstddef>

#include "anycl/opencl.hpp"

namespace anycl::detail::clblast_binaries {

/// Receives a binary.
using Sink = void (*)(void* context, const char* bytes, size_t size);

/// True when CLBlast's binary cache can be reached in this process.
bool reachable() noexcept;
/// Gives `sink` CLBlast's single-precision binary for (platform, routine key, device name); false
/// when it holds none or cannot be reached.
bool get(cl_platform_id platform, const char* routine, const char* device, Sink sink, void* context) noexcept;
/// Stores `bytes` as that binary unless one is there already; true when CLBlast holds one now.
bool put(cl_platform_id platform, const char* routine, const char* device, const char* bytes,
         size_t size) noexcept;

/// Empties CLBlast's cache of compiled programs (its ProgramCache: one entry per context, each holding
/// its context alive), keeping the binaries above, from which the next call on a live context builds
/// again without compiling. False when that cache cannot be reached.
bool forget_programs() noexcept;

}  // namespace anycl::detail::clblast_binaries
