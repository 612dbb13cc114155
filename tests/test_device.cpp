// Device discovery and every form of device spec: on every device of the machine (a GPU too), and
// the vendor and name forms on PoCL's CPU device where it is installed (tools/setup.sh installs it).
#include <doctest/doctest.h>
#include <anycl/device.hpp>
#include <anycl/error.hpp>
#include <anycl/runtime.hpp>

#include <algorithm>
#include <cctype>
#include <optional>

#include "helpers.hpp"

namespace {

std::optional<anycl::DeviceInfo> pocl_device() {
  const auto devices = anycl::list_devices();
  auto it = std::find_if(devices.begin(), devices.end(), [](const anycl::DeviceInfo& d) {
    return d.platform_name.find("Portable Computing Language") != std::string::npos;
  });
  if (it == devices.end()) return std::nullopt;
  return *it;
}

}  // namespace

TEST_CASE("list_devices finds every device with its properties") {
  const auto devices = anycl::list_devices();
  REQUIRE_MESSAGE(!devices.empty(), "no OpenCL device: is pocl-opencl-icd installed?");
  for (size_t i = 0; i < devices.size(); ++i) {
    const anycl::DeviceInfo& d = devices[i];
    CAPTURE(d.name);
    CHECK(d.index == i);
    CHECK(d.compute_units >= 1);
    CHECK(d.global_mem_bytes > 0);
    CHECK(d.max_alloc_bytes > 0);
    CHECK(d.max_work_group_size >= 1);
    CHECK(!d.driver_version.empty());
    CHECK(d.opencl_c_version.find("OpenCL C") != std::string::npos);
    CHECK(d.id != nullptr);
    CHECK(anycl::select_device(std::to_string(d.index)).id == d.id);
    CHECK(anycl::select_device(std::to_string(d.platform_index) + ":" + std::to_string(d.device_index)).id ==
          d.id);
  }
  CHECK(anycl::select_device("").index < devices.size());
}

TEST_CASE("every spec form selects the PoCL device") {
  const auto d = pocl_device();
  if (!d) ANYCL_SKIP_TEST(Missing::installed_by_setup, "no PoCL device (pocl-opencl-icd)");
  CHECK(d->type == anycl::DeviceType::cpu);
  std::string upper_part = d->name.substr(0, 6);
  std::transform(upper_part.begin(), upper_part.end(), upper_part.begin(), ::toupper);
  for (const std::string& spec : std::vector<std::string>{
           std::to_string(d->index),
           std::to_string(d->platform_index) + ":" + std::to_string(d->device_index), "pocl", upper_part}) {
    CAPTURE(spec);
    CHECK(anycl::select_device(spec).id == d->id);
  }
  CHECK(anycl::select_device("cpu").type == anycl::DeviceType::cpu);
}

TEST_CASE("a spec that matches nothing lists the devices that exist") {
  const auto devices = anycl::list_devices();
  REQUIRE(!devices.empty());
  const anycl::DeviceInfo& d = devices.back();
  for (const std::string spec : {"nosuch", "99", "7:7", "accelerator-that-is-not-there"}) {
    CAPTURE(spec);
    try {
      anycl::select_device(spec);
      FAIL("select_device('" << spec << "') should have thrown");
    } catch (const anycl::DeviceSpecError& e) {
      const std::string msg = e.what();
      CHECK(msg.find("no OpenCL device matches") != std::string::npos);
      CHECK(msg.find(d.name) != std::string::npos);
    }
  }
}

TEST_CASE("a spec from $ANYCL_DEVICE that matches nothing says it came from there and how to get out") {
  REQUIRE(!anycl::list_devices().empty());
  anycl::test::ScopedEnv env("ANYCL_DEVICE", "nosuch");
  try {
    anycl::Runtime rt;  // no spec of the caller's: $ANYCL_DEVICE's
    FAIL("a Runtime on ANYCL_DEVICE=nosuch should have thrown");
  } catch (const anycl::DeviceSpecError& e) {
    const std::string msg = e.what();
    CHECK(msg.find("no OpenCL device matches 'nosuch', the device spec taken from $ANYCL_DEVICE") !=
          std::string::npos);
    CHECK(msg.find("unset ANYCL_DEVICE to use the best device") != std::string::npos);
  }
  // A spec the caller gave is not blamed on the environment.
  anycl::RuntimeOptions options;
  options.device_spec = "nosuch-either";
  try {
    anycl::Runtime rt(options);
    FAIL("a Runtime on device_spec nosuch-either should have thrown");
  } catch (const anycl::DeviceSpecError& e) {
    CHECK(std::string(e.what()).find("ANYCL_DEVICE") == std::string::npos);
  }
}
