// Tuning as a library call (anycl/blas/tune.hpp): the worker program found beside the library, a
// clear error where it is missing, and a tune() that its progress callback stops, keeping the best
// set found so far (stored and applied). The C and Python doors have tests of their own.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <anycl/blas/tune.hpp>
#include <anycl/error.hpp>
#include <filesystem>

#include "helpers.hpp"

namespace {

namespace fs = std::filesystem;
const std::string kSmallDatabase = std::string(ANYCL_SOURCE_DIR) + "/tests/tuning_database";

}  // namespace

TEST_CASE("find_tune_worker finds the worker beside the built library, and says where it looked when not") {
  const std::string found = anycl::find_tune_worker();
  CHECK(fs::path(found).filename().string().rfind("anycl-tune-worker", 0) == 0);
  CHECK(fs::is_regular_file(found));
  anycl::test::TempDir dir;
  {
    anycl::test::ScopedEnv named("ANYCL_TUNE_WORKER", dir.file("nowhere"));
    const std::string expected = "ANYCL_TUNE_WORKER is " + dir.file("nowhere") + ", which is not a file";
    CHECK_THROWS_WITH_AS(anycl::find_tune_worker(), doctest::Contains(expected.c_str()), anycl::Error);
    // tune() looks for it before it measures or stores anything.
    anycl::test::ScopedEnv cache("ANYCL_CACHE_DIR", dir.path());
    anycl::Runtime rt;
    CHECK_THROWS_WITH_AS(anycl::tune(rt, {}), doctest::Contains("anycl-tune-worker"), anycl::Error);
    CHECK(!fs::exists(anycl::tuning_file_path(rt.info())));
  }
}

TEST_CASE(
    "tune() stopped by its progress callback after the first candidate keeps that set, stored and applied") {
  anycl::test::TempDir dir;
  anycl::test::ScopedEnv cache("ANYCL_CACHE_DIR", dir.path());
  anycl::test::ScopedEnv small("ANYCL_TUNING_DATABASE", kSmallDatabase);
  anycl::Runtime rt;
  anycl::TuneSettings s;
  s.shapes = anycl::parse_gemm_shapes("NN48x40x56/fwd 1;TN56x40x48/dW 1");
  s.minutes = 30;
  size_t calls = 0, stopped_at = 0;
  std::string last;
  s.progress = [&](const anycl::TuneProgress& p) {
    ++calls;
    last = p.line;
    if (p.candidates >= 1 && !stopped_at) stopped_at = p.candidates;
    return p.candidates < 1;
  };
  const anycl::TuneReport r = anycl::tune(rt, s);
  CHECK(r.stopped);
  CHECK(stopped_at == 1);
  CHECK(calls > 3);
  REQUIRE(r.tuning.kernels.count("XgemmDirect") == 1);
  CHECK(!anycl::tuning_complete(r.tuning));
  const auto stored = anycl::load_tuning(r.path);
  REQUIRE(stored);
  CHECK(stored->kernels == r.tuning.kernels);
  CHECK(r.path == anycl::tuning_file_path(rt.info()));
  CHECK(fs::path(r.path).parent_path() == fs::path(dir.path()));
}

TEST_CASE("GEMM shapes round-trip through their text form, and bad text names the item") {
  const auto shapes = anycl::parse_gemm_shapes("NN128x512x784^/fwd 1;TN64x288x4608*16/dW 1");
  REQUIRE(shapes.size() == 2);
  CHECK(shapes[0].transposes_a);
  CHECK(shapes[1].count == 16);
  CHECK(anycl::format_gemm_shapes(shapes) == "NN128x512x784^/fwd 1;TN64x288x4608*16/dW 1");
  CHECK_THROWS_WITH_AS(anycl::parse_gemm_shapes("NX1x2x3/a"), doctest::Contains("'NX1x2x3/a'"),
                       anycl::ValidationError);
}
