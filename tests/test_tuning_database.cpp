// The tuning database shipped in tuning/*.txt: every entry parses, meets CLBlast's constraints and
// matches its device class only; a device without its own tuning file gets its entry at start-up
// once the exact GEMM check passed, and the verdict is cached for the next start.
#include <clblast.h>
#include <doctest/doctest.h>
#include <anycl/blas/tuning.hpp>
#include <anycl/error.hpp>
#include <anycl/runtime.hpp>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <vector>

#include "blas/clblast_params.hpp"
#include "blas/gemm_plan.hpp"
#include "blas/tuning/tuning_check.hpp"
#include "helpers.hpp"
#include "runtime/disk_cache.hpp"
#include "util/platform.hpp"

namespace {

using anycl::test::ScopedEnv;

anycl::DeviceInfo fake(const std::string& platform, const std::string& name) {
  anycl::DeviceInfo d;
  d.platform_name = platform;
  d.name = name;
  d.driver_version = "1.0";
  return d;
}

// CLBlast's parameters of the kernels `t` sets, for restoring them afterwards.
anycl::GemmTuning clblast_now(anycl::Runtime& rt, const anycl::GemmTuning& t) {
  anycl::GemmTuning now;
  for (const auto& [kernel, params] : t.kernels) {
    if (kernel.rfind("anycl", 0) == 0) continue;  // anycl's own choices, not CLBlast's
    std::map<std::string, size_t> p;
    REQUIRE(anycl::detail::clblast_params::retrieve(rt.info().id, kernel, p) ==
            clblast::StatusCode::kSuccess);
    now.kernels[kernel] = p;
  }
  return now;
}

}  // namespace

TEST_CASE("every tuning database entry parses, meets CLBlast's constraints and matches its class only") {
  // The shared runtime first, while the database is off (as for every test): started with it on, it
  // would run the exact GEMM check of this device's entry, which compiles CLBlast's programs (four
  // minutes on a cold PoCL cache) for nothing this test looks at.
  auto& rt = anycl::test::runtime();
  ScopedEnv on("ANYCL_TUNING_DATABASE", "on");
  std::string entry;
  const auto pocl =
      anycl::database_tuning(fake("Portable Computing Language", "pthread-skylake-avx512-X"), &entry);
  REQUIRE(pocl);
  CHECK(entry == "tuning/pocl-cpu-avx512.txt");
  CHECK(pocl->kernels.count("XgemmDirect"));
  const auto intel = anycl::database_tuning(fake("Intel(R) OpenCL", "AMD EPYC"), &entry);
  REQUIRE(intel);
  CHECK(entry == "tuning/intel-cpu.txt");
  const auto hopper = anycl::database_tuning(fake("NVIDIA CUDA", "NVIDIA H200"), &entry);
  REQUIRE(hopper);
  CHECK(entry == "tuning/nvidia-hopper.txt");
  CHECK(hopper->kernels.count("Xgemm"));
  CHECK(!anycl::database_tuning(fake("NVIDIA CUDA", "NVIDIA A100-SXM4-40GB")));  // measured on Hopper only
  CHECK(!anycl::database_tuning(fake("NVIDIA CUDA", "NVIDIA GeForce RTX 4090")));
  bool generic = true;
  const auto avx2 = anycl::database_tuning(fake("Portable Computing Language", "pthread-haswell-Intel Xeon"),
                                           &entry, &generic);
  REQUIRE(avx2);
  CHECK(entry == "tuning/pocl-cpu-avx2.txt");
  CHECK(!generic);
  CHECK(anycl::database_tuning(fake("Portable Computing Language", "pthread-znver3-AMD Ryzen"), &entry));
  CHECK(entry == "tuning/pocl-cpu-avx2.txt");  // matched by capability (the CPU family), not one name
  CHECK(anycl::database_tuning(fake("Portable Computing Language", "pthread-sandybridge-AMD EPYC"), &entry));
  CHECK(entry == "tuning/pocl-cpu-avx2.txt");  // AVX alone: 16 registers of 256 bits, as on AVX2
  CHECK(anycl::database_tuning(fake("Portable Computing Language", "pthread-penryn-AMD EPYC"), &entry));
  CHECK(entry == "tuning/pocl-cpu-generic.txt");  // SSE4.1: no entry names it
  CHECK(anycl::database_tuning(fake("Portable Computing Language", "pthread-znver4-AMD EPYC"), &entry));
  CHECK(entry == "tuning/pocl-cpu-avx512.txt");
  // Any other PoCL CPU gets the generic fallback, marked so first-use tuning still runs there.
  const auto other =
      anycl::database_tuning(fake("Portable Computing Language", "pthread-cortex-a72-ARM"), &entry, &generic);
  REQUIRE(other);
  CHECK(entry == "tuning/pocl-cpu-generic.txt");
  CHECK(generic);
  // Its GEMMs under 120³ (the MLP's output layer, the first layer's last dW rows) on the small direct
  // set, as on the AVX2 entry, whose direct set it shares (SSE4.1, 2026-12-04: 0.66-0.73x their time
  // on padded 128 × 64 tiles); the AVX-512 entry keeps every GEMM on the indirect kernel (below).
  CHECK(other->kernels.at("GemmRoutine").at("XGEMM_MIN_INDIRECT_SIZE") == 120);
  CHECK(other->kernels.at("XgemmDirect") == avx2->kernels.at("XgemmDirect"));
  {
    ScopedEnv off("ANYCL_TUNING_DATABASE", "off");
    CHECK(!anycl::database_tuning(fake("Intel(R) OpenCL", "AMD EPYC")));
  }
  // Accepted by apply_tuning (CLBlast's constraints and parameter names), then CLBlast restored;
  // each entry's `large` sets too (what a model with large GEMMs gets).
  const std::vector<anycl::GemmShape> cnn = {{"fwd 2", false, false, 73728, 64, 288}};
  std::vector<anycl::GemmTuning> entries = {*pocl, *intel, *avx2, *other, *hopper};
  const std::string pocl_name = "Portable Computing Language";
  for (const auto& d : {fake(pocl_name, "pthread-skylake-avx512-X"), fake(pocl_name, "pthread-haswell-X"),
                        fake(pocl_name, "pthread-cortex-a72-ARM"), fake("Intel(R) OpenCL", "AMD EPYC")})
    if (const auto large = anycl::database_tuning(d, nullptr, nullptr, &cnn)) entries.push_back(*large);
  CHECK(entries.size() == 9);
  const size_t most_slices = anycl::detail::gemm_state(rt).dw_slices;
  for (const anycl::GemmTuning& t : entries) {
    const anycl::GemmTuning before = clblast_now(rt, t);
    CHECK_NOTHROW(anycl::apply_tuning(rt, t));
    anycl::apply_tuning(rt, before);
    anycl::detail::gemm_state(rt).transposed_dx = false;
    anycl::detail::gemm_state(rt).batched_dw = true;
    anycl::detail::set_most_dw_slices(rt, most_slices);
    anycl::detail::gemm_state(rt).dw_xgemm.clear();
  }
  // anycl's switch for a convolution's sliced weight gradient (one strided-batched GEMM, or one GEMM per
  // slice): what an entry's `anyclConv` line sets (Intel's CPU runtime had BATCHED_DW=0 on its earlier sets).
  anycl::GemmTuning conv_only;
  conv_only.kernels["anyclConv"] = {{"BATCHED_DW", 0}};
  anycl::apply_tuning(rt, conv_only);
  CHECK(!anycl::detail::gemm_state(rt).batched_dw);
  conv_only.kernels["anyclConv"] = {{"BATCHED_DW", 1}};
  anycl::apply_tuning(rt, conv_only);
  CHECK(anycl::detail::gemm_state(rt).batched_dw);
  conv_only.kernels["anyclConv"] = {{"BATCHED_DW", 2}};
  CHECK_THROWS_AS(anycl::apply_tuning(rt, conv_only), anycl::ValidationError);
  // ...and the most slices the split takes (PoCL's CPU entries: 128); a line without it resets it.
  conv_only.kernels["anyclConv"] = {{"DW_SLICES", 128}};
  anycl::apply_tuning(rt, conv_only);
  CHECK(anycl::detail::gemm_state(rt).dw_slices == 128);
  CHECK(anycl::detail::gemm_state(rt).batched_dw);
  conv_only.kernels["anyclConv"] = {{"BATCHED_DW", 0}, {"DW_SLICES", 32}};
  anycl::apply_tuning(rt, conv_only);
  CHECK(anycl::detail::gemm_state(rt).dw_slices == 32);
  CHECK(!anycl::detail::gemm_state(rt).batched_dw);
  conv_only.kernels["anyclConv"] = {{"BATCHED_DW", 1}};
  anycl::apply_tuning(rt, conv_only);
  CHECK(anycl::detail::gemm_state(rt).dw_slices == anycl::detail::GemmState::kDefaultDwSlices);
  for (const size_t wrong : {size_t(0), size_t(1025)}) {
    conv_only.kernels["anyclConv"] = {{"DW_SLICES", wrong}};
    CHECK_THROWS_AS(anycl::apply_tuning(rt, conv_only), anycl::ValidationError);
  }
  conv_only.kernels["anyclConv"] = {{"DW_SLICES", 16}, {"SLICES", 16}};
  CHECK_THROWS_AS(anycl::apply_tuning(rt, conv_only), anycl::ValidationError);
  anycl::detail::set_most_dw_slices(rt, most_slices);
  // An export is an entry again.
  const std::string text = anycl::database_entry(*intel, fake("Intel(R) OpenCL", "AMD EPYC"));
  CHECK(text.rfind("anycl-tuning-database 1\n", 0) == 0);
  CHECK(text.find("match platform=Intel(R) OpenCL; device=AMD EPYC") != std::string::npos);
  CHECK(text.find("kernel Xgemm GEMMK=0") != std::string::npos);
}

// One test case for both (they were two): each starts runtimes on the database, whose exact check
// compiles the entry's CLBlast programs; as two processes side by side on a cold PoCL cache both
// compiled them (7.7 min of CPU against 4.2 one after the other, 2 cores).
TEST_CASE(
    "a device without a tuning file gets its database entry after the exact check once - a model with large "
    "GEMMs its large sets") {
  ScopedEnv on("ANYCL_TUNING_DATABASE", "on");
  const std::vector<anycl::GemmShape> mlp = anycl::reference_model_gemm_shapes(),
                                      cnn = {{"fwd 2", false, false, 73728, 64, 288}};
  const auto avx512 = fake("Portable Computing Language", "pthread-skylake-avx512-X");
  const auto small = anycl::database_tuning(avx512, nullptr, nullptr, &mlp);
  const auto large = anycl::database_tuning(avx512, nullptr, nullptr, &cnn);
  REQUIRE(small);
  REQUIRE(large);
  CHECK(small->kernels == anycl::database_tuning(avx512)->kernels);  // no shapes: the entry's own sets
  // The CNN's GEMMs run on the MLP's indirect set with 96-wide tiles (conv 2's patch of 288 is three
  // of them, 2026-11-29); its `large` lines send its GEMMs under 120³ (the first convolution's
  // weight-gradient slices) to a direct kernel of 32×32 tiles (2026-11-26).
  CHECK(large->kernels.at("Xgemm").at("MWG") == 96);
  CHECK(small->kernels.at("Xgemm").at("MWG") == 128);
  CHECK(large->kernels.at("Xgemm").at("GEMMK") == small->kernels.at("Xgemm").at("GEMMK"));
  CHECK(large->kernels.at("GemmRoutine").at("XGEMM_MIN_INDIRECT_SIZE") == 120);
  CHECK(small->kernels.at("GemmRoutine").at("XGEMM_MIN_INDIRECT_SIZE") == 1);
  CHECK(large->kernels.at("XgemmDirect").at("WGD") == 32);
  // The AVX2 entry keeps 128-wide tiles for the CNN but names a 96-wide set for the convolutions'
  // weight gradients (2026-12-02); a model without large GEMMs gets no dW set (the line at none).
  const auto avx2 = fake("Portable Computing Language", "pthread-haswell-X");
  const auto avx2_large = anycl::database_tuning(avx2, nullptr, nullptr, &cnn);
  const auto avx2_small = anycl::database_tuning(avx2, nullptr, nullptr, &mlp);
  REQUIRE(avx2_large);
  REQUIRE(avx2_small);
  CHECK(avx2_large->kernels.at("Xgemm").at("MWG") == 128);
  CHECK(avx2_large->kernels.at("anyclConvDwXgemm").at("MWG") == 96);
  CHECK(avx2_small->kernels.at("anyclConvDwXgemm").empty());
  CHECK(large->kernels.at("anyclConvDwXgemm").empty());  // AVX-512's tiles are 96 wide for every GEMM
  // but a Dense layer's forward product, on the base set's 128 × 64 tiles (2026-12-02): the reference
  // CNN's batch of 128 whole; no Dense set for a model without large GEMMs, nor on the AVX2 entry.
  CHECK(large->kernels.at("anyclDenseXgemm") == small->kernels.at("Xgemm"));
  CHECK(small->kernels.at("anyclDenseXgemm").empty());
  CHECK(avx2_large->kernels.at("anyclDenseXgemm").empty());
  // Winograd's products on 128 × 32 tiles on both entries (2026-12-02, sixth session): conv 2's input
  // gradient, m = 32, whole there where the 64-wide tiles of either model set padded it to 64.
  for (const auto* entry : {&large, &avx2_large}) {
    CHECK((*entry)->kernels.at("anyclConvWinogradXgemm").at("NWG") == 32);
    CHECK((*entry)->kernels.at("anyclConvWinogradXgemm").at("MWG") == 128);
  }
  CHECK(small->kernels.at("anyclConvWinogradXgemm").empty());
  CHECK(avx2_small->kernels.at("anyclConvWinogradXgemm").empty());

  // On the test device.
  const anycl::DeviceInfo device = anycl::test::runtime().info();
  std::string entry;
  const auto tuning = anycl::database_tuning(device, &entry);
  if (!tuning)
    ANYCL_SKIP_TEST(Missing::capability,
                    "no tuning database entry matches " + device.name + " (" + device.platform_name + ")");
  {  // the entry, after the exact check, whose verdict is cached
    anycl::test::TempDir dir;
    anycl::test::seeded_kernel_cache(dir.path());
    ScopedEnv cache("ANYCL_CACHE_DIR", dir.path());
    anycl::Runtime& shared = anycl::test::runtime();
    const anycl::GemmTuning before = clblast_now(shared, *tuning);
    auto verdicts = [&] {
      size_t n = 0;
      for (const auto& e : std::filesystem::directory_iterator(dir.path()))
        n += e.path().filename().string().rfind("tuning_check-", 0) == 0;
      return n;
    };
    {
      anycl::Runtime rt(device);
      CHECK(rt.stats().tuning_file == "anycl's tuning database, " + entry);
      CHECK(
          anycl::detail::gemm_state(rt).transposed_dx ==
          (tuning->kernels.count("anyclDense") && tuning->kernels.at("anyclDense").at("TRANSPOSED_DX") == 1));
    }
    CHECK(verdicts() == 1);  // the check ran once and its verdict is cached
    {
      anycl::Runtime rt(device);  // the warm start reads the verdict
      CHECK(rt.stats().tuning_file == "anycl's tuning database, " + entry);
    }
    CHECK(verdicts() == 1);
    {
      ScopedEnv off("ANYCL_TUNING", "off");  // off turns the database off too
      anycl::Runtime rt(device);
      CHECK(rt.stats().tuning_file.empty());
    }
    anycl::apply_tuning(shared, before);
  }
  {  // a runtime on the database switches sets with the model, and back
    anycl::test::TempDir dir;
    anycl::test::seeded_kernel_cache(dir.path());
    ScopedEnv cache("ANYCL_CACHE_DIR", dir.path());
    // Both sets' exact checks are the block above's (the same code, cached per set); their verdicts are
    // given here so that this block checks the switch alone (with the CNN's sets checked here too, the
    // test took 266 s on a cold PoCL cache and 755 s under ASan in CI rehearsals; 233 s without, 2 cores).
    const anycl::detail::DiskCache verdicts(dir.path());
    anycl::detail::remember_exact_tuning(anycl::test::runtime(), *tuning, verdicts);
    anycl::detail::remember_exact_tuning(anycl::test::runtime(),
                                         *anycl::database_tuning(device, nullptr, nullptr, &cnn), verdicts);
    // CLBlast's parameters before any runtime device applied the database (the shared runtime's), restored
    // after.
    const anycl::GemmTuning before =
        clblast_now(anycl::test::runtime(), *anycl::database_tuning(device, nullptr, nullptr, &cnn));
    anycl::Runtime rt(device);
    auto routine = [&] {
      std::map<std::string, size_t> p;
      REQUIRE(anycl::detail::clblast_params::retrieve(device.id, "GemmRoutine", p) ==
              clblast::StatusCode::kSuccess);
      return p;
    };
    anycl::apply_model_tuning(rt, cnn);
    CHECK(routine() == anycl::database_tuning(device, nullptr, nullptr, &cnn)->kernels.at("GemmRoutine"));
    anycl::apply_model_tuning(rt, mlp);
    CHECK(routine() == anycl::database_tuning(device)->kernels.at("GemmRoutine"));
    {
      ScopedEnv off("ANYCL_TUNING", "off");
      anycl::Runtime plain(device);  // no database tuning applied: apply_model_tuning leaves CLBlast alone
      anycl::apply_model_tuning(plain, cnn);
      CHECK(routine() == anycl::database_tuning(device)->kernels.at("GemmRoutine"));
    }
    anycl::apply_tuning(anycl::test::runtime(), before);
  }
}

TEST_CASE(
    "ANYCL_TUNING_DATABASE=FOLDER: its entries replace the shipped ones - a bad folder or entry stops the "
    "start") {
  anycl::test::TempDir dir;
  const std::string folder = dir.file("entries");
  std::filesystem::create_directories(folder);
  const auto write = [&](const std::string& name, const std::string& text) {
    std::ofstream(folder + "/" + name) << text;
  };
  // A lab's own entry (as `anycl tune --export` prints one), and a file that is no entry (not *.txt).
  write("lab-cpu.txt",
        "anycl-tuning-database 1\nmatch platform=Lab OpenCL; device=lab cpu\n"
        "kernel XgemmDirect KWID=2 MDIMAD=8 MDIMCD=8 NDIMBD=8 NDIMCD=8 PADA=1 PADB=1 VWMD=4 "
        "VWND=4 WGD=32\ncandidate Xgemm GEMMK=0 KREG=1 KWG=16 KWI=2 MDIMA=16 MDIMC=16 MWG=64 "
        "NDIMB=8 NDIMC=8 NWG=32 SA=0 SB=0 STRM=1 STRN=0 VWM=1 VWN=1\n");
  write("README", "not an entry");
  {
    ScopedEnv lab("ANYCL_TUNING_DATABASE", folder);
    std::string entry;
    const auto tuning = anycl::database_tuning(fake("Lab OpenCL", "Lab CPU 9000"), &entry);
    REQUIRE(tuning);
    CHECK(entry == folder + "/lab-cpu.txt");
    CHECK(tuning->kernels.at("XgemmDirect").at("WGD") == 32);
    // The shipped entries are not consulted: Intel's runtime matches nothing here.
    CHECK(!anycl::database_tuning(fake("Intel(R) OpenCL", "AMD EPYC")));
    CHECK(anycl::database_parameter_sets("XgemmDirect").size() == 1);
    REQUIRE(anycl::database_parameter_sets("Xgemm").size() == 1);
    CHECK(anycl::database_parameter_sets("Xgemm")[0].at("MWG") == 64);
  }
  const auto refused = [&](const std::string& setting, const std::string& says) {
    ScopedEnv bad("ANYCL_TUNING_DATABASE", setting);
    CAPTURE(setting);
    CHECK_THROWS_WITH_AS(anycl::database_tuning(fake("Lab OpenCL", "Lab CPU")),
                         doctest::Contains(says.c_str()), anycl::Error);
    CHECK_THROWS_WITH_AS(anycl::database_parameter_sets("Xgemm"), doctest::Contains(says.c_str()),
                         anycl::Error);
  };
  refused(dir.file("missing"),
          "ANYCL_TUNING_DATABASE=" + dir.file("missing") + ": No such file or directory");
  refused(folder + "/lab-cpu.txt", "not a folder");  // a file where the folder goes
  write("broken.txt", "anycl-tuning-database 1\nmatch device=x\nkernel Xgemm MWG=sixty-four\n");
  refused(folder, folder + "/broken.txt: bad parameter 'MWG=sixty-four'");
  write("broken.txt", "anycl-tuning-database 1\nmatch vendor=x\nkernel Xgemm MWG=64\n");
  refused(folder, folder + "/broken.txt: unknown match key 'vendor'");
  std::filesystem::remove(folder + "/broken.txt");
  std::filesystem::create_directory(folder + "/folder.txt");  // named as an entry, but no regular file
  refused(folder, "not a regular file");
  // A runtime started on such a setting stops with the reason instead of silently running without it.
  ScopedEnv cache("ANYCL_CACHE_DIR", dir.file("cache"));
  ScopedEnv bad("ANYCL_TUNING_DATABASE", dir.file("missing"));
  CHECK_THROWS_WITH_AS(anycl::Runtime(anycl::test::runtime().info()),
                       doctest::Contains("ANYCL_TUNING_DATABASE="), anycl::Error);
}
