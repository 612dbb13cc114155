// Tensor transfers, fill and row views on the device.
#include <doctest/doctest.h>
#include <anycl/error.hpp>
#include <anycl/tensor.hpp>

#include "helpers.hpp"

using anycl::Tensor;

TEST_CASE("tensor upload/download round-trips exactly") {
  auto& rt = anycl::test::runtime();
  for (size_t n : {1, 7, 1025, 128 * 784}) {
    const auto values = anycl::test::random_floats(n, -3.f, 3.f, unsigned(n));
    Tensor t = Tensor::from_host(rt, {n}, values);
    CHECK(t.download() == values);
  }
}

TEST_CASE("tensor fill - row views and reshape") {
  auto& rt = anycl::test::runtime();
  const auto values = anycl::test::random_floats(6 * 5, -1.f, 1.f, 3);
  Tensor t = Tensor::from_host(rt, {6, 5}, values);
  CHECK(t.rows() == 6);
  CHECK(t.cols() == 5);
  CHECK(t.shape_string() == "(6, 5)");

  Tensor middle = t.rows(2, 3);
  CHECK(middle.offset() == 10);
  const auto got = middle.download();
  CHECK(got == std::vector<float>(values.begin() + 10, values.begin() + 25));

  middle.fill(7.5f);
  auto all = t.download();
  for (size_t i = 0; i < all.size(); ++i) CHECK(all[i] == (i >= 10 && i < 25 ? 7.5f : values[i]));

  std::vector<float> upload = anycl::test::random_floats(5, 10.f, 20.f, 4);
  t.rows(5, 1).upload(upload);
  all = t.download();
  CHECK(std::vector<float>(all.begin() + 25, all.end()) == upload);

  CHECK(t.reshaped({30}).download() == all);
  CHECK_THROWS_AS(t.reshaped({7, 5}), anycl::ValidationError);
  CHECK_THROWS_AS(t.rows(4, 3), anycl::ValidationError);
  CHECK_THROWS_AS(t.upload(std::vector<float>(29)), anycl::ValidationError);
}

TEST_CASE("a tensor larger than the device allows names both sizes") {
  auto& rt = anycl::test::runtime();
  const size_t too_many = rt.info().max_alloc_bytes / sizeof(float) + 1;
  try {
    Tensor t(rt, {too_many});
    FAIL("allocation should have been refused");
  } catch (const anycl::ValidationError& e) {
    CHECK(std::string(e.what()).find("smaller batch") != std::string::npos);
  }
}

TEST_CASE("tensors carry a dtype - typed transfers round-trip and mismatches are refused") {
  auto& rt = anycl::test::runtime();
  Tensor f(rt, {2, 3});
  CHECK(f.dtype() == anycl::DType::f32);
  CHECK(f.element_size() == 4);
  Tensor i(rt, {5}, anycl::DType::i32);
  const std::vector<int32_t> ints{-7, 0, 3, 1 << 30, -(1 << 30)};
  i.upload(ints);
  CHECK(i.download_i32() == ints);
  CHECK(i.rows(2, 2).download_i32() == std::vector<int32_t>{3, 1 << 30});
  Tensor u(rt, {2, 3}, anycl::DType::u8);
  CHECK(u.element_size() == 1);
  const std::vector<uint8_t> bytes{0, 1, 127, 128, 254, 255};
  u.upload(bytes);
  CHECK(u.download_u8() == bytes);
  CHECK(u.rows(1, 1).download_u8() == std::vector<uint8_t>{128, 254, 255});
  CHECK_THROWS_AS(i.download(), anycl::ValidationError);
  CHECK_THROWS_AS(f.download_i32(), anycl::ValidationError);
  CHECK_THROWS_AS(u.upload(ints), anycl::ValidationError);
  CHECK_THROWS_AS(i.fill(1.f), anycl::ValidationError);
}
