// The `anycl devices` command as a user runs it: JSON that parses and matches list_devices,
// exit codes for bad specs and for a machine with no OpenCL platform; a second process hits the
// kernel cache.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <anycl/device.hpp>

#include <nlohmann/json.hpp>

#include "helpers.hpp"

using anycl::test::anycl_cli;
using anycl::test::run_command;

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

TEST_CASE("anycl devices shows the PoCL device - --version and --help work") {
  auto r = run_command(anycl_cli() + " devices");
  CHECK(r.exit_code == 0);
  CHECK(r.output.find("Portable Computing Language") != std::string::npos);
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
TEST_CASE("a new process hits the cache: `anycl devices --verbose` compiles nothing the second time") {
  anycl::test::TempDir dir;
  const std::string cmd =
      fmt::format("ANYCL_CACHE_DIR={} {} devices --verbose", dir.path(), anycl::test::anycl_cli());
  const auto first = anycl::test::run_command(cmd);
  REQUIRE_MESSAGE(first.exit_code == 0, first.output);
  CHECK(first.output.find("0 from the disk cache") != std::string::npos);
  const auto second = anycl::test::run_command(cmd);
  REQUIRE_MESSAGE(second.exit_code == 0, second.output);
  CHECK_MESSAGE(second.output.find(", 0 compiled,") != std::string::npos, second.output);
}
