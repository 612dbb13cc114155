// Building a model on a runtime prepares its GEMMs (src/blas/gemm_prepare.cpp): a model whose GEMMs
// are large gets the tuning database's `large` sets whether it is built for training or, through the
// C API, for the prediction of one row — the same CLBlast parameters either way.
#include <anycl/anycl.h>
#include <doctest/doctest.h>
#include <anycl/blas/tuning.hpp>
#include <anycl/nn/model_from_flags.hpp>
#include <anycl/nn/sequential.hpp>
#include <anycl/train/model_file.hpp>

#include <map>
#include <string>
#include <vector>

#include "blas/clblast_params.hpp"
#include "blas/tuning/tuning_check.hpp"
#include "helpers.hpp"
#include "runtime/disk_cache.hpp"

namespace {

using anycl::test::ScopedEnv;

// CLBlast's parameters now for the kernels `t` sets (anycl's own lines left out).
anycl::GemmTuning clblast_now(const anycl::DeviceInfo& device, const anycl::GemmTuning& t) {
  anycl::GemmTuning now;
  for (const auto& [kernel, params] : t.kernels) {
    if (kernel.rfind("anycl", 0) == 0) continue;
    REQUIRE(anycl::detail::clblast_params::retrieve(device.id, kernel, now.kernels[kernel]) ==
            clblast::StatusCode::kSuccess);
  }
  return now;
}

}  // namespace

TEST_CASE(
    "a model built on a runtime prepares its GEMMs - C API prediction runs the parameters training runs") {
  anycl::Runtime& shared = anycl::test::runtime();  // started before the database is on, as in every test
  const anycl::DeviceInfo device = shared.info();
  ScopedEnv on("ANYCL_TUNING_DATABASE", "on");
  const auto entry = anycl::database_tuning(device);
  if (!entry)
    ANYCL_SKIP_TEST(Missing::capability,
                    "no tuning database entry matches " + device.name + " (" + device.platform_name + ")");
  // An MLP of 2048 inputs and 1024 units: its first GEMM at a batch of 128 is 2^28 multiply-adds (large),
  // and one row at inference runs the fused row kernel, no GEMM, so nothing of CLBlast's compiles here.
  anycl::ModelFlags flags;
  flags.layers = "1024";
  anycl::Sequential model(anycl::model_from_flags(flags, anycl::Shape{1, 32, 64}, 10));
  const std::vector<anycl::GemmShape> shapes = anycl::model_gemm_shapes(model, 128, &shared);
  const auto large = anycl::database_tuning(device, nullptr, nullptr, &shapes);
  REQUIRE(large);
  anycl::test::TempDir dir;
  anycl::test::seeded_kernel_cache(dir.path());
  ScopedEnv cache("ANYCL_CACHE_DIR", dir.path());
  // The exact checks' verdicts, given: this test checks which sets apply, not the sets (the database test
  // checks them).
  const anycl::detail::DiskCache verdicts(dir.path());
  anycl::detail::remember_exact_tuning(shared, *entry, verdicts);
  anycl::detail::remember_exact_tuning(shared, *large, verdicts);
  const anycl::GemmTuning before = clblast_now(device, *large);
  const std::string path = dir.file("large.anyclmodel");
  {
    ScopedEnv off("ANYCL_TUNING", "off");
    anycl::Runtime plain(device);  // runs no database entry: building a model there changes nothing
    model.build(plain, 2);
    CHECK(clblast_now(device, *large).kernels == before.kernels);
    model.initialize(7);
    anycl::save_model(path, model, 10);
  }

  // Training's path: the model built on a runtime that runs the entry, for its batch.
  anycl::GemmTuning trained;
  {
    anycl::Runtime rt(device);
    REQUIRE(rt.stats().tuning_file.rfind("anycl's tuning database", 0) == 0);
    CHECK(clblast_now(device, *large).kernels == clblast_now(device, *entry).kernels);
    anycl::Sequential for_training(model.spec());
    for_training.build(rt, 128);
    trained = clblast_now(device, *large);
    for (const auto& [kernel, params] : trained.kernels) CHECK(params == large->kernels.at(kernel));
  }
  // Prediction's path through the C API: a fresh runtime (back on the entry's own sets), one row.
  anycl_runtime* rt = nullptr;
  REQUIRE(anycl_runtime_create(nullptr, &rt) == ANYCL_OK);
  CHECK(clblast_now(device, *large).kernels == clblast_now(device, *entry).kernels);
  anycl_model* loaded = nullptr;
  REQUIRE(anycl_model_load(path.c_str(), &loaded) == ANYCL_OK);
  std::vector<float> x(2048, 0.5f), y(10);
  CHECK(anycl_predict(loaded, rt, x.data(), 1, y.data(), y.size()) == ANYCL_OK);
  CHECK(clblast_now(device, *large).kernels == trained.kernels);
  if (large->kernels == entry->kernels)
    MESSAGE("the entry for " << device.name << " has no large sets: both paths run its own");
  anycl_model_destroy(loaded);
  anycl_runtime_destroy(rt);
  anycl::apply_tuning(shared, before);
}
