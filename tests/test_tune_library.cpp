// Tuning as a library call (anycl/blas/tune.hpp): the worker program found beside the library, a
// clear error where it is missing, and a tune() that its progress callback stops, keeping the best
// set found so far (stored and applied). The C and Python doors have tests of their own.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <anycl/blas/tune.hpp>
#include <anycl/error.hpp>
#include <filesystem>

#include "blas/clblast_params.hpp"
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
  anycl::test::seeded_kernel_cache(dir.path());
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
  anycl::test::seeded_kernel_cache(dir.path());
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

TEST_CASE("a runtime tuned by tune() keeps its tuning when a model with large GEMMs is built on it") {
  // Without the database a runtime has nothing to switch to; with it (the shipped entries), building
  // a model with large GEMMs on a runtime that runs the entry switches to the entry's `large` sets —
  // but not on a runtime tune() has tuned since (what it stored would be replaced without a word).
  anycl::test::TempDir dir;
  anycl::test::seeded_kernel_cache(dir.path());
  anycl::test::ScopedEnv cache("ANYCL_CACHE_DIR", dir.path());
  anycl::test::ScopedEnv on("ANYCL_TUNING_DATABASE", "on");
  anycl::Runtime rt;
  const std::vector<anycl::GemmShape> cnn = {{"fwd 2", false, false, 73728, 64, 288}};
  const auto entry = anycl::database_tuning(rt.info());
  const auto large = anycl::database_tuning(rt.info(), nullptr, nullptr, &cnn);
  if (!entry || !large || large->kernels == entry->kernels)
    ANYCL_SKIP_TEST(Missing::capability,
                    "no tuning database entry with large sets matches " + rt.info().name);
  REQUIRE(rt.stats().tuning_file.rfind("anycl's tuning database", 0) == 0);
  auto now = [&] {
    anycl::GemmTuning t;
    for (const auto& [kernel, params] : large->kernels) {
      if (kernel.rfind("anycl", 0) == 0) continue;  // anycl's own choices, not CLBlast's
      REQUIRE(anycl::detail::clblast_params::retrieve(rt.info().id, kernel, t.kernels[kernel]) ==
              clblast::StatusCode::kSuccess);
    }
    return t.kernels;
  };
  anycl::TuneSettings s;
  s.shapes = anycl::parse_gemm_shapes("NN48x40x56/fwd 1;TN56x40x48/dW 1");
  s.progress = [](const anycl::TuneProgress& p) { return p.candidates < 1; };
  const anycl::TuneReport r = anycl::tune(rt, s);
  REQUIRE(r.tuning.kernels.count("XgemmDirect") == 1);
  const auto tuned = now();
  CHECK(tuned.at("XgemmDirect") == r.tuning.kernels.at("XgemmDirect"));
  anycl::apply_model_tuning(rt, cnn);
  CHECK(now() == tuned);
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
