// The `anycl devices` command as a user runs it: JSON that parses and matches list_devices,
// exit codes for bad specs and for a machine with no OpenCL platform; a second process hits the
// kernel cache.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <anycl/device.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>

#include "data_files.hpp"
#include "helpers.hpp"
#include "runtime/driver_hints.hpp"

using anycl::test::anycl_cli;
using anycl::test::contains_all;
using anycl::test::Missing;
using anycl::test::run_command;

TEST_SUITE_BEGIN("cli");  // the anycl command as a child process (a CTest label: tests/CMakeLists.txt)

TEST_CASE("anycl devices --json parses and matches list_devices") {
  const auto r = run_command(anycl_cli() + " devices --json 2>/dev/null");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const auto json = nlohmann::json::parse(r.output);
  const auto devices = anycl::list_devices();
  REQUIRE(json.size() == devices.size());
  int selected = 0;
  for (size_t i = 0; i < devices.size(); ++i) {
    CHECK(json[i]["index"] == devices[i].index);
    CHECK(json[i]["name"] == devices[i].name);
    CHECK(json[i]["driver_version"] == devices[i].driver_version);
    CHECK(json[i]["compute_units"] == devices[i].compute_units);
    CHECK(json[i]["global_mem_bytes"] == devices[i].global_mem_bytes);
    CHECK(json[i]["type"] == anycl::to_string(devices[i].type));
    CHECK(json[i]["fp64"] == devices[i].fp64);
    selected += json[i]["selected"].get<bool>();
  }
  CHECK(selected == 1);
}

TEST_CASE("anycl devices shows every device - --version and --help work") {
  auto r = run_command(anycl_cli() + " devices");
  CHECK(r.exit_code == 0);
  for (const anycl::DeviceInfo& d : anycl::list_devices()) {
    CAPTURE(d.name);
    CHECK(r.output.find(d.name) != std::string::npos);
    CHECK(r.output.find(d.platform_name) != std::string::npos);
  }
  r = run_command(anycl_cli() + " --version");
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("anycl 0.") != std::string::npos);
  r = run_command(anycl_cli() + " --help");
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("devices") != std::string::npos);
}

TEST_CASE("a device spec that matches nothing exits 2 listing the devices") {
  const auto devices = anycl::list_devices();
  for (const std::string& cmd : std::vector<std::string>{"ANYCL_DEVICE=nosuch " + anycl_cli() + " devices",
                                                         anycl_cli() + " devices --device nosuch"}) {
    CAPTURE(cmd);
    const auto r = run_command(cmd);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("no OpenCL device matches 'nosuch'") != std::string::npos);
    CHECK(r.output.find(devices.front().name) != std::string::npos);
  }
}

TEST_CASE("a spec from $ANYCL_DEVICE that matches nothing is named as the environment's, with the ways out") {
  for (const std::string sub : {" devices", " train --epochs 1"}) {
    const auto r = run_command("ANYCL_DEVICE=nosuch " + anycl_cli() + sub);
    CAPTURE(r.output);
    CHECK(r.exit_code == 2);
    CHECK(r.output.find("ANYCL_DEVICE=nosuch (from the environment)") != std::string::npos);
    CHECK(r.output.find("unset ANYCL_DEVICE") != std::string::npos);
  }
  const auto flag = run_command(anycl_cli() + " devices --device nosuch");
  CHECK(flag.output.find("ANYCL_DEVICE") == std::string::npos);  // a flag's spec is not the environment's
}

TEST_CASE("bytes from the environment or the command line reach the terminal as printable text") {
  // An escape sequence and a byte that is not UTF-8 in $ANYCL_DEVICE, and a control byte in a command
  // name: quoted as \xNN, never echoed raw (they could drive the terminal).
  const auto env = run_command("ANYCL_DEVICE=$(printf 'no\\033[2Jsuch\\377') " + anycl_cli() + " devices");
  CAPTURE(env.output);
  CHECK(env.exit_code == 2);
  CHECK(env.output.find("no\\x1B[2Jsuch\\xFF") != std::string::npos);
  CHECK(env.output.find('\033') == std::string::npos);
  const auto command = run_command(anycl_cli() + " $(printf 'train\\007')");
  CHECK(command.exit_code == 2);
  CHECK(command.output.find("train\\x07") != std::string::npos);
  CHECK(command.output.find('\007') == std::string::npos);
}

TEST_CASE("bad usage exits 2") {
  CHECK(run_command(anycl_cli() + " devices --bogus").exit_code == 2);
  CHECK(run_command(anycl_cli() + " devices --device").exit_code == 2);
  CHECK(run_command(anycl_cli() + " nosuchcommand").exit_code == 2);
  CHECK(run_command(anycl_cli()).exit_code == 2);
}

TEST_CASE("with no OpenCL platform the error says how to install one") {
  anycl::test::TempDir empty;
  const auto r = run_command(fmt::format("OCL_ICD_VENDORS={} {} devices", empty.path(), anycl_cli()));
  CHECK(r.exit_code == 1);
  CHECK_MESSAGE(r.output.find("no OpenCL platform found") != std::string::npos, r.output);
  CHECK(r.output.find("pocl-opencl-icd") != std::string::npos);
  CHECK(r.output.find("/etc/OpenCL/vendors") != std::string::npos);
}
// Where the driver keeps its own kernel cache (PoCL) anycl stores no binaries: the second process
// then loads from that cache, which gains no file (ANYCL_TUNING=off: no CLBlast program at start-up).
TEST_CASE("a new process hits the cache: `anycl devices --verbose` compiles nothing the second time") {
  anycl::test::TempDir dir;
  const std::string driver_cache = dir.file("pocl");
  const std::string cmd =
      fmt::format("ANYCL_TUNING=off ANYCL_CACHE_DIR={} POCL_CACHE_DIR={} {} devices --verbose",
                  dir.file("anycl"), driver_cache, anycl::test::anycl_cli());
  const auto first = anycl::test::run_command(cmd);
  REQUIRE_MESSAGE(first.exit_code == 0, first.output);
  const anycl::DeviceInfo& d = anycl::test::runtime().info();
  const bool driver_keeps =
      !anycl::detail::driver_program_cache(d.vendor + " " + d.platform_name, d.platform_version).empty();
  const std::vector<std::string> compiled =
      driver_keeps ? anycl::test::driver_cache_files(driver_cache) : std::vector<std::string>{};
  const auto second = anycl::test::run_command(cmd);
  REQUIRE_MESSAGE(second.exit_code == 0, second.output);
  if (driver_keeps) {
    CHECK_MESSAGE(
        first.output.find("built through the driver's own kernel cache " + driver_cache) != std::string::npos,
        first.output);
    CHECK(!compiled.empty());
    CHECK(anycl::test::driver_cache_files(driver_cache) == compiled);
  } else {
    CHECK(first.output.find("0 from the disk cache") != std::string::npos);
    CHECK_MESSAGE(second.output.find(", 0 compiled,") != std::string::npos, second.output);
  }
}

// Issue 25: PoCL offers no device, or builds no program, when it cannot write its kernel cache;
// anycl names the folder and what to do. As root every folder is writable, so the tests use a file
// where PoCL wants a folder.
TEST_CASE("an unwritable PoCL kernel-cache folder is named - with what to do") {
  const auto devices = anycl::list_devices();
  const bool pocl = std::any_of(devices.begin(), devices.end(), [](const anycl::DeviceInfo& d) {
    return d.platform_name.find("Portable Computing Language") != std::string::npos;
  });
  if (!pocl) ANYCL_SKIP_TEST(Missing::installed_by_setup, "no PoCL device (pocl-opencl-icd)");
  anycl::test::TempDir dir;
  const std::string file = dir.file("not-a-folder");
  anycl::test::write_file(file, {'x'});

  // A folder under a file cannot be created: PoCL offers no device.
  const std::string under_file = (std::filesystem::path(file) / "kcache").string();
  auto r =
      run_command(fmt::format("ANYCL_DEVICE=pocl POCL_CACHE_DIR='{}' {} devices", under_file, anycl_cli()));
  CHECK(r.exit_code != 0);
  CHECK_MESSAGE(contains_all(r.output, {"PoCL cannot write its kernel cache at '" + under_file + "'",
                                        "set by POCL_CACHE_DIR", "'" + file + "' is a file, not a folder",
                                        "set POCL_CACHE_DIR to a writable folder"}),
                r.output);

  // The file itself as the folder: PoCL offers its device but builds no program.
  r = run_command(
      fmt::format("ANYCL_DEVICE=pocl ANYCL_CACHE_DIR='{}' POCL_CACHE_DIR='{}' {} devices --verbose",
                  dir.file("anycl-cache"), file, anycl_cli()));
  CHECK(r.exit_code != 0);
  CHECK_MESSAGE(
      contains_all(r.output, {"failed to build", "PoCL cannot write its kernel cache at '" + file + "'",
                              "is a file, not a folder", "set POCL_CACHE_DIR to a writable folder"}),
      r.output);
}

TEST_SUITE_END();
