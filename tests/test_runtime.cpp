// Runtime start-up: kernels compile, the disk cache is hit by a second Runtime and by a new
// process, corrupt entries are rebuilt, and a broken kernel reports the compiler's log.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <anycl/error.hpp>
#include <anycl/runtime.hpp>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>

#include "helpers.hpp"
#include "hostile_files.hpp"
#include "runtime/disk_cache.hpp"
#include "runtime/driver_hints.hpp"
#include "runtime/kernel_sources.hpp"
#include "runtime/runtime_impl.hpp"
#include "util/platform.hpp"

namespace fs = std::filesystem;

namespace {

using anycl::test::ScopedEnv;

std::vector<fs::path> cache_entries(const std::string& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".bin") files.push_back(e.path());
  return files;
}

}  // namespace

TEST_CASE("the runtime compiles every program and creates kernels") {
  // A runtime of its own: the shared one also holds the variants other tests built (-D options).
  anycl::Runtime rt(anycl::test::runtime().info());
  CHECK(rt.stats().programs == rt.program_names().size());
  CHECK(!rt.program_names().empty());
  CHECK_NOTHROW(anycl::detail::kernel(rt, "init", "uniform_init"));
  CHECK_THROWS_WITH_AS(anycl::detail::kernel(rt, "init", "no_such_kernel"),
                       doctest::Contains("no_such_kernel"), anycl::OpenCLError);
  CHECK_THROWS_AS(anycl::detail::program(rt, "no_such_program"), anycl::ValidationError);
}

TEST_CASE("a second runtime hits the disk cache - corrupt entries are rebuilt and replaced") {
  anycl::test::TempDir dir;
  ScopedEnv env("ANYCL_CACHE_DIR", dir.path());
  anycl::RuntimeOptions stored;  // on every driver, PoCL too (which keeps its own cache by default)
  stored.store_program_binaries = true;
  const size_t programs = anycl::Runtime(stored).stats().programs;
  {
    anycl::Runtime second(stored);
    CHECK(second.stats().cache_hits == programs);
    CHECK(second.stats().cache_misses == 0);
  }
  const auto entries = cache_entries(dir.path());
  REQUIRE(entries.size() == programs);

  // The three kinds of damage in turn over the entries (one cold compile, not one per kind: on Intel's
  // runtime each was 20 s): a flipped byte (checksum mismatch), a truncated entry, and a valid checksum
  // over a binary the driver cannot load. Every damaged entry is rebuilt.
  REQUIRE(entries.size() >= 3);
  const anycl::detail::DiskCache cache(dir.path());
  for (size_t i = 0; i < entries.size(); ++i) {
    const fs::path& path = entries[i];
    if (i % 3 == 0) {
      std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
      f.seekg(40);
      char c = 0;
      f.get(c);
      f.seekp(40);
      f.put(char(c ^ 0x5a));
    } else if (i % 3 == 1) {
      fs::resize_file(path, fs::file_size(path) / 2);
    } else {
      REQUIRE(cache.put(path.stem().string(), std::vector<unsigned char>(64, 0xab)));
    }
  }
  {
    anycl::Runtime rebuilt(stored);
    CHECK(rebuilt.stats().cache_misses == programs);
    CHECK_NOTHROW(anycl::detail::kernel(rebuilt, "init", "uniform_init"));
  }
  anycl::Runtime after(stored);
  CHECK(after.stats().cache_hits == programs);
}

// PoCL compiles every kernel of a program once more when its binary is read back, in a form that
// training never launches; it keeps what it compiles in a cache of its own, which serves a second start.
// Entries stored anyway (`anycl cache warm`) are loaded: a start without PoCL's compiler front end.
TEST_CASE("programs go to the disk cache unless the driver keeps its own kernel cache (PoCL)") {
  anycl::test::TempDir dir;
  ScopedEnv env("ANYCL_CACHE_DIR", dir.path());
  anycl::Runtime rt;
  const anycl::DeviceInfo& d = rt.info();
  const bool pocl =
      !anycl::detail::driver_program_cache(d.vendor + " " + d.platform_name, d.platform_version).empty();
  CHECK(rt.stats().driver_cache.empty() == !pocl);
  CHECK(rt.stats().cache_hits == 0);
  const std::vector<std::string> names = rt.program_names();
  size_t program_entries = 0;
  for (const fs::path& entry : cache_entries(dir.path())) {
    const std::string stem = entry.stem().string();
    program_entries += std::count(names.begin(), names.end(), stem.substr(0, stem.rfind('-')));
  }
  CHECK(program_entries == (pocl ? 0 : rt.stats().programs));
  if (pocl) CHECK(rt.stats().driver_cache.find("pocl") != std::string::npos);

  // Stored all the same (as `anycl cache warm` does), the entries are loaded on every driver.
  anycl::RuntimeOptions stored;
  stored.store_program_binaries = true;
  CHECK(anycl::Runtime(stored).stats().cache_hits == (pocl ? 0 : rt.stats().programs));
  const anycl::Runtime after;
  CHECK(after.stats().cache_hits == rt.stats().programs);
  CHECK(after.stats().cache_misses == 0);

  // An entry the driver refuses (a valid checksum over a binary it cannot load) is replaced even where
  // a start stores nothing of its own: the next start loads it again.
  std::string init_key;
  for (const fs::path& entry : cache_entries(dir.path()))
    if (entry.stem().string().rfind("init-", 0) == 0) init_key = entry.stem().string();
  REQUIRE(!init_key.empty());
  REQUIRE(anycl::detail::DiskCache(dir.path()).put(init_key, std::vector<unsigned char>(64, 0xab)));
  CHECK(anycl::Runtime().stats().cache_misses == 1);
  CHECK(anycl::Runtime().stats().cache_misses == 0);
}

TEST_CASE("ANYCL_CACHE=off compiles from source and writes nothing") {
  anycl::test::TempDir dir;
  ScopedEnv cache_dir("ANYCL_CACHE_DIR", dir.path());
  ScopedEnv off("ANYCL_CACHE", "off");
  anycl::Runtime rt;
  CHECK(rt.stats().cache_misses == rt.stats().programs);
  CHECK(rt.stats().cache_dir.empty());
  CHECK(fs::is_empty(dir.path()));
}

TEST_CASE("a broken kernel in ANYCL_KERNEL_DIR raises a build error with the compiler's log") {
  anycl::test::TempDir dir;
  for (const auto& s : anycl::detail::embedded_kernel_sources()) {
    std::ofstream out(dir.path() + "/" + s.name + ".cl");
    out << s.source;
    if (s.name == "init")
      out << "\n__kernel void broken(__global float* x) { x[0] = undefined_symbol_xyz; }\n";
  }
  ScopedEnv env("ANYCL_KERNEL_DIR", dir.path());
  try {
    anycl::Runtime rt;
    FAIL("the broken kernel should not build");
  } catch (const anycl::BuildError& e) {
    CHECK(e.log().find("undefined_symbol_xyz") != std::string::npos);
    const std::string msg = e.what();
    CHECK(msg.find("init.cl") != std::string::npos);
    CHECK(msg.find("-cl-std=CL1.2") != std::string::npos);
  }
}

TEST_CASE("ANYCL_KERNEL_DIR without a needed file says which") {
  anycl::test::TempDir dir;
  ScopedEnv env("ANYCL_KERNEL_DIR", dir.path());
  CHECK_THROWS_WITH_AS(anycl::Runtime(), doctest::Contains("common.cl"), anycl::ValidationError);
}

TEST_CASE("a runtime starts on a device chosen from list_devices") {
  const std::vector<anycl::DeviceInfo> devices = anycl::list_devices();
  REQUIRE_FALSE(devices.empty());
  const anycl::DeviceInfo& chosen = anycl::test::runtime().info();
  anycl::Runtime rt(chosen);
  CHECK(rt.info().name == chosen.name);
  CHECK(rt.info().index == chosen.index);
  CHECK(rt.stats().programs == rt.program_names().size());
}

TEST_CASE("ANYCL_KERNEL_DIR holding a FIFO is refused at once naming it") {
  anycl::test::TempDir dir;
  const std::string fifo = dir.file("common.cl");
  // Opening it to read would wait for a writer forever.
  if (!anycl::test::make_fifo(fifo)) ANYCL_SKIP_TEST(Missing::capability, "no FIFOs on this system");
  ScopedEnv env("ANYCL_KERNEL_DIR", dir.path());
  CHECK_THROWS_WITH_AS(anycl::Runtime(), doctest::Contains("FIFO"), anycl::ValidationError);
}
