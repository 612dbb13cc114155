// Device discovery and every form of device spec, on the PoCL CPU device.
#include <doctest/doctest.h>
#include <anycl/device.hpp>
#include <anycl/error.hpp>

#include <algorithm>
#include <cctype>

namespace {

anycl::DeviceInfo pocl_device() {
  const auto devices = anycl::list_devices();
  auto it = std::find_if(devices.begin(), devices.end(), [](const anycl::DeviceInfo& d) {
    return d.platform_name.find("Portable Computing Language") != std::string::npos;
  });
  REQUIRE_MESSAGE(it != devices.end(), "the PoCL device was not found; is pocl-opencl-icd installed?");
  return *it;
}

}  // namespace

TEST_CASE("list_devices finds the PoCL CPU device with its properties") {
  const auto d = pocl_device();
  CHECK(d.type == anycl::DeviceType::cpu);
  CHECK(d.compute_units >= 1);
  CHECK(d.global_mem_bytes > 0);
  CHECK(d.max_alloc_bytes > 0);
  CHECK(d.max_work_group_size >= 1);
  CHECK(!d.driver_version.empty());
  CHECK(d.opencl_c_version.find("OpenCL C") != std::string::npos);
  CHECK(d.id != nullptr);
  const auto devices = anycl::list_devices();
  for (size_t i = 0; i < devices.size(); ++i) CHECK(devices[i].index == i);
}

TEST_CASE("every spec form selects the PoCL device") {
  const auto d = pocl_device();
  std::string upper_part = d.name.substr(0, 6);
  std::transform(upper_part.begin(), upper_part.end(), upper_part.begin(), ::toupper);
  for (const std::string& spec : std::vector<std::string>{
           std::to_string(d.index), std::to_string(d.platform_index) + ":" + std::to_string(d.device_index),
           "pocl", upper_part}) {
    CAPTURE(spec);
    CHECK(anycl::select_device(spec).id == d.id);
  }
  CHECK(anycl::select_device("cpu").type == anycl::DeviceType::cpu);
  CHECK(anycl::select_device("").index < anycl::list_devices().size());
}

TEST_CASE("a spec that matches nothing lists the devices that exist") {
  const auto d = pocl_device();
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
