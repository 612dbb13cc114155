// `anycl doctor` in a healthy set-up (every check passes, exit 0) and in broken ones: no driver
// registered (OCL_ICD_VENDORS at an empty folder), a data folder that does not exist, and a stored
// tuning file whose CLBlast parameters compute wrong results.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <anycl/blas/tuning.hpp>

#include <cstdlib>
#include <filesystem>

#include "helpers.hpp"

using anycl::test::anycl_cli;
using anycl::test::run_command;

TEST_CASE("anycl doctor passes on a healthy set-up") {
  const auto r = run_command(fmt::format("{} doctor", anycl_cli()));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(r.output.find("\u2717") == std::string::npos);
  CHECK(r.output.find("OpenCL ICD loader") != std::string::npos);
  CHECK(r.output.find(".icd") != std::string::npos);
  CHECK(r.output.find("matches the host exactly") != std::string::npos);
  CHECK(r.output.find("is writable") != std::string::npos);
  CHECK(r.output.find("All checks passed.") != std::string::npos);
}

TEST_CASE("anycl doctor with OCL_ICD_VENDORS at an empty folder says what to do") {
  anycl::test::TempDir empty;
  const auto r = run_command(fmt::format("OCL_ICD_VENDORS={} {} doctor", empty.path(), anycl_cli()));
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("\u2717 no OpenCL driver registered") != std::string::npos);
  CHECK(r.output.find("\u2717 no OpenCL device detected") != std::string::npos);
  CHECK(r.output.find("unset OCL_ICD_VENDORS") != std::string::npos);
  CHECK(r.output.find("pocl-opencl-icd") != std::string::npos);
  CHECK(r.output.find("failed") != std::string::npos);
  MESSAGE(r.output);
}

TEST_CASE("anycl doctor reports a missing data folder and a driver that does not load") {
  anycl::test::TempDir vendors;
  // A stale .icd naming a library that is not installed, next to the real PoCL entry.
  const char* real = std::getenv("OCL_ICD_VENDORS");  // e.g. PoCL and Intel's runtime (run-tests.sh)
  run_command(fmt::format("cp {0}/*.icd {1}/ && echo libnosuchdriver.so > {1}/stale.icd",
                          real ? real : "/etc/OpenCL/vendors", vendors.path()));
  const auto r = run_command(fmt::format("OCL_ICD_VENDORS={} {} doctor --data {}/none", vendors.path(),
                                         anycl_cli(), vendors.path()));
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("stale.icd \u2192 libnosuchdriver.so does not load") != std::string::npos);
  CHECK(r.output.find("lacks train-images-idx3-ubyte") != std::string::npos);
  CHECK(r.output.find("ANYCL_DATA") != std::string::npos);
  CHECK(r.output.find("matches the host exactly") != std::string::npos);  // the good driver still works
}

TEST_CASE("anycl doctor checks a stored tuning file for exact GEMM results") {
  anycl::test::TempDir dir;
  anycl::test::seeded_kernel_cache(dir.path());
  const auto name = std::filesystem::path(anycl::tuning_file_path(anycl::test::runtime().info())).filename();
  // What CLBlast's Xgemm tuner chose on PoCL 3.1 here; forced onto the indirect kernel.
  anycl::GemmTuning t;
  t.kernels["GemmRoutine"] = {{"XGEMM_MIN_INDIRECT_SIZE", 1}};
  t.kernels["Xgemm"] = {{"GEMMK", 1}, {"KREG", 8},  {"KWG", 1},   {"KWI", 1},  {"MDIMA", 16}, {"MDIMC", 16},
                        {"MWG", 128}, {"NDIMB", 2}, {"NDIMC", 2}, {"NWG", 16}, {"SA", 0},     {"SB", 0},
                        {"STRM", 0},  {"STRN", 0},  {"VWM", 8},   {"VWN", 8}};
  anycl::save_tuning(dir.file(name.string()), t);
  const auto r = run_command(fmt::format("ANYCL_CACHE_DIR={} {} doctor", dir.path(), anycl_cli()));
  // Intel's CPU compiler (2026.2) crashes compiling them: doctor survives that and refuses them.
  const bool wrong = r.output.find("computes wrong results or crashes the driver") != std::string::npos;
  CHECK_MESSAGE((wrong || r.output.find("computes exact results") != std::string::npos), r.output);
  if (wrong) {  // doctor fails, names device, driver and parameters, and says what to do
    CHECK(r.exit_code != 0);
    for (const std::string& word :
         {std::string("refused parameter set on"), anycl::test::runtime().info().name,
          anycl::test::runtime().info().driver_version, std::string("GEMMK=1"),
          std::string("anycl tune --reset"), std::string("matches the host exactly")})
      CHECK_MESSAGE(r.output.find(word) != std::string::npos, word, " not in: ", r.output);
  }
}
