// What a driver's own set-up can get wrong beyond what an OpenCL status says, as text to add to an
// error where the failure surfaces (no device, a program that does not build), and whether a driver
// keeps a kernel cache of its own. Vendor-neutral entry point; today only PoCL has a known cause (a
// kernel-cache folder it cannot write) and a cache of its own.
#pragma once

#include <string>

namespace anycl::detail {

/// Whether the OpenCL platform named `platform_name` (version `platform_version`) is PoCL.
bool is_pocl_platform(const std::string& platform_name, const std::string& platform_version);
/// Where the driver keeps the programs it compiles in an on-disk cache of its own, that cache's
/// folder; else empty. PoCL does unless POCL_KERNEL_CACHE turns it off. anycl then stores no program
/// binaries of its own for that driver: reading a binary back from PoCL (clGetProgramInfo) compiles
/// every kernel of the program in a form that training never runs (PoCL compiles each kernel again
/// for its work-group size at first launch): 28 of a cold start's 31.6 s on Zen 4, 2026-12-03.
std::string driver_program_cache(const std::string& platform_name, const std::string& platform_version);
/// A sentence naming what is wrong with the set-up of that platform's driver and what to do, or
/// empty when nothing is found. Called only after a failure: it may probe the file system.
std::string driver_setup_hint(const std::string& platform_name, const std::string& platform_version);

}  // namespace anycl::detail
