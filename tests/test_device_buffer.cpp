// DeviceBuffer: round trips, counted blocking transfers, shared copies, and errors that name the
// buffer, the size and the device instead of an OpenCL status.
#include <doctest/doctest.h>

#include <anycl/device_buffer.hpp>
#include <anycl/error.hpp>
#include <anycl/runtime.hpp>
#include <cstdint>
#include <limits>
#include <vector>

#include "helpers.hpp"

TEST_CASE("a device buffer round-trips bytes and counts its blocking transfers") {
  anycl::Runtime& rt = anycl::test::runtime();
  std::vector<int32_t> values(1000);
  for (size_t i = 0; i < values.size(); ++i) values[i] = int32_t(i * 7919 % 1000003) - 500000;
  anycl::DeviceBuffer buffer(rt, values.size() * sizeof(int32_t), "test values");
  CHECK(buffer.bytes() == values.size() * sizeof(int32_t));
  const uint64_t waits = rt.counters().host_waits;
  buffer.write(values.data(), values.size() * sizeof(int32_t));
  std::vector<int32_t> back(values.size(), -1);
  buffer.read(back.data(), back.size() * sizeof(int32_t));
  CHECK(back == values);
  CHECK(rt.counters().host_waits == waits + 2);
  // A part, at an offset; a copy shares the memory.
  const anycl::DeviceBuffer copy = buffer;
  int32_t part[3] = {0, 0, 0};
  copy.read(part, sizeof(part), 10 * sizeof(int32_t));
  CHECK(part[0] == values[10]);
  CHECK(part[2] == values[12]);
  // Filled at creation.
  const anycl::DeviceBuffer filled(rt, sizeof(part), "filled", part);
  int32_t again[3] = {0, 0, 0};
  filled.read(again, sizeof(again));
  CHECK(again[1] == part[1]);
}

TEST_CASE("device buffer errors name the buffer, the size and the device") {
  anycl::Runtime& rt = anycl::test::runtime();
  const size_t too_big = rt.info().max_alloc_bytes + 4096;
  CHECK_THROWS_WITH_AS(anycl::DeviceBuffer(rt, too_big, "huge weights"), doctest::Contains("huge weights"),
                       anycl::ValidationError);
  CHECK_THROWS_WITH_AS(anycl::DeviceBuffer(rt, too_big, "huge weights"),
                       doctest::Contains(rt.info().name.c_str()), anycl::ValidationError);
  anycl::DeviceBuffer small(rt, 16, "small");
  char bytes[32] = {};
  CHECK_THROWS_WITH_AS(small.read(bytes, 32), doctest::Contains("does not fit the small"),
                       anycl::ValidationError);
  CHECK_THROWS_AS(small.write(bytes, 8, std::numeric_limits<size_t>::max()), anycl::ValidationError);
  const anycl::DeviceBuffer empty;
  CHECK_FALSE(empty);
  CHECK_THROWS_AS(empty.read(bytes, 1), anycl::ValidationError);
}
