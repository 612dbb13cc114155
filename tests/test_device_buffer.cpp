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

TEST_CASE("a sub-buffer shares its parent's memory from an aligned offset, also cut from a sub-buffer") {
  anycl::Runtime& rt = anycl::test::runtime();
  const size_t align = rt.info().base_address_alignment;
  REQUIRE(align > 0);
  std::vector<uint8_t> bytes(4 * align);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = uint8_t(i * 31 + 7);
  const anycl::DeviceBuffer parent(rt, bytes.size(), "test bytes", bytes.data());
  CHECK(parent.can_start_at(align));
  CHECK_FALSE(parent.can_start_at(align + 4));
  CHECK_FALSE(parent.can_start_at(bytes.size()));
  const anycl::DeviceBuffer sub = parent.sub_buffer(align, 3 * align);
  CHECK(sub.bytes() == 3 * align);
  uint8_t first = 0;
  sub.read(&first, 1);
  CHECK(first == bytes[align]);
  // Written through a sub-buffer of the sub-buffer (OpenCL cuts it from the parent), read in the parent.
  const anycl::DeviceBuffer inner = sub.sub_buffer(align, align);
  const uint8_t mark = 0xA5;
  inner.write(&mark, 1);
  uint8_t seen = 0;
  parent.read(&seen, 1, 2 * align);
  CHECK(seen == mark);
  CHECK_THROWS_WITH_AS(parent.sub_buffer(align + 4, align), doctest::Contains("multiple of"),
                       anycl::ValidationError);
  CHECK_THROWS_WITH_AS(parent.sub_buffer(align, 4 * align), doctest::Contains("does not fit"),
                       anycl::ValidationError);
}
