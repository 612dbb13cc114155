// Shared test helpers: the per-process Runtime, element-wise comparison with a clear report,
// seeded random inputs, and running the anycl command as a subprocess.
#pragma once

#include <anycl/device_buffer.hpp>
#include <anycl/runtime.hpp>

#include <algorithm>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "util/platform.hpp"

namespace anycl::test {

/// One Runtime for the whole test process (device from $ANYCL_DEVICE, else the best).
Runtime& runtime();
/// Destroys the shared runtime (main() calls it before returning): OpenCL objects released from
/// exit handlers, after the driver's own teardown has begun, crash some drivers (Oclgrind).
void release_runtime();

/// Checks |dev − ref| ≤ atol + rtol·|ref| element-wise; on failure reports the first bad index
/// with both values (and how many elements failed).
void check_close(const std::vector<float>& dev, const std::vector<float>& ref, double atol, double rtol,
                 const std::string& what = "");

/// `n` uniform floats in [lo, hi) from `seed`.
std::vector<float> random_floats(size_t n, float lo, float hi, unsigned seed);
/// `n` small integers in [lo, hi] as floats (products and sums stay exact).
std::vector<float> random_ints(size_t n, int lo, int hi, unsigned seed);

/// A device buffer holding a copy of `values` (at least one element's room).
template <typename V>
DeviceBuffer device_copy(Runtime& rt, const std::vector<V>& values) {
  return DeviceBuffer(rt, std::max<size_t>(values.size(), 1) * sizeof(V), "test data",
                      values.empty() ? nullptr : values.data());
}
/// The first `n` values of a device buffer (blocking).
template <typename V>
std::vector<V> read_back(const DeviceBuffer& buffer, size_t n) {
  std::vector<V> out(n);
  buffer.read(out.data(), n * sizeof(V));
  return out;
}

struct CommandResult {
  int exit_code = -1;
  std::string output;  // stdout and stderr together
};
/// Runs a shell command line and captures its output and exit code.
CommandResult run_command(const std::string& command_line);
/// A whole file's bytes as a string ("" when it cannot be read).
std::string slurp(const std::string& path);
/// For each (flags, words): `anycl train --limit 10 FLAGS` must exit 2 with `words` in its output.
void expect_train_usage_errors(const std::vector<std::pair<std::string, std::string>>& cases);
/// The path of the built anycl command.
std::string anycl_cli();

/// Why a test cannot run here: a capability this device or machine lacks (two PoCL devices,
/// fp64…), or a component tools/setup.sh installs (MPI, onnxruntime, Intel's OpenCL runtime).
enum class Missing { capability, installed_by_setup };
/// Marks the running test as skipped: prints kSkipMarker and the reason, which CTest's
/// SKIP_REGULAR_EXPRESSION reports as "Skipped" (never as a pass). Under CI=true a component the
/// set-up installs being absent fails the test instead. Use ANYCL_SKIP_TEST, which also returns.
void skip(Missing kind, const std::string& reason);
inline constexpr const char* kSkipMarker = "[anycl test skipped]";

/// A fresh empty directory under the system temp dir; removed when the object dies.
class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }
  /// path()/name.
  std::string file(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

/// `folder` (made if missing) holding the anycl programs this device has compiled, copied from the shared
/// runtime's disk cache: for a test that isolates its tuning files in a fresh ANYCL_CACHE_DIR without
/// compiling every kernel again (Intel's CPU runtime keeps no compile cache of its own: a cold start was
/// ~9 s of such a test there). Tuning files, tuning-check verdicts and CLBlast's programs are not copied.
/// Returns `folder`.
std::string seeded_kernel_cache(const std::string& folder);

/// What a driver's own kernel cache in `folder` (a POCL_CACHE_DIR) holds: the paths of its files under
/// it, but the access stamps a load rewrites and PoCL's temporaries. The same list after a run means the run
/// compiled nothing.
std::vector<std::string> driver_cache_files(const std::string& folder);

/// Sets an environment variable for the lifetime of the object, then restores what was there.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::string& value) : name_(name), old_(detail::platform::get_env(name)) {
    detail::platform::set_env(name, value);
  }
  ~ScopedEnv() { detail::platform::set_env(name_, old_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

}  // namespace anycl::test

/// Skips the running test (see anycl::test::skip) and returns from it.
#define ANYCL_SKIP_TEST(kind, reason)                 \
  do {                                                \
    ::anycl::test::skip(::anycl::test::kind, reason); \
    return;                                           \
  } while (false)
