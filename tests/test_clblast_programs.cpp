// CLBlast's compiled programs kept in anycl's kernel cache between processes
// (src/blas/clblast_program_store.hpp): the name anycl computes for a program is the one CLBlast
// files it under, a kept binary is handed back after CLBlast's cache is emptied (as in a new
// process) and GEMM stays exact, and a kept binary the device refuses is never handed over.
#include <clblast.h>
#include <doctest/doctest.h>

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "blas/clblast_binary_cache.hpp"
#include "blas/clblast_program_store.hpp"
#include "gemm_exact.hpp"
#include "helpers.hpp"
#include "runtime/disk_cache.hpp"

namespace {

using anycl::test::check_gemm_exact;
using anycl::test::Missing;
namespace binaries = anycl::detail::clblast_binaries;

// CLBlast's key for the GEMM program at its current parameters on `rt`'s device.
struct GemmProgram {
  cl_platform_id platform = nullptr;
  std::string program, device;

  explicit GemmProgram(anycl::Runtime& rt)
      : program(anycl::detail::clblast_program_name(rt, "GEMM")),
        device(anycl::detail::clblast_device_name(rt.info().id)) {
    clGetDeviceInfo(rt.info().id, CL_DEVICE_PLATFORM, sizeof platform, &platform, nullptr);
  }
  /// The binary CLBlast holds for it, if any.
  std::optional<std::string> held() const {
    std::string bytes;
    const auto into = [](void* to, const char* b, size_t size) {
      static_cast<std::string*>(to)->assign(b, size);
    };
    if (!binaries::get(platform, program.c_str(), device.c_str(), into, &bytes)) return std::nullopt;
    return bytes;
  }
};

bool clblast_holds_gemm(anycl::Runtime& rt) { return GemmProgram(rt).held().has_value(); }

// The test device with a kernel cache of its own, CLBlast's GEMM program compiled (or held) and
// kept there: the keys of what was kept.
struct KeptGemm {
  anycl::test::TempDir dir;
  anycl::test::ScopedEnv cache_dir{"ANYCL_CACHE_DIR", dir.path()};
  anycl::Runtime& rt = anycl::test::runtime();
  size_t written = 0;

  KeptGemm() {
    check_gemm_exact(rt, 33, 17, 65);
    written = anycl::detail::keep_clblast_programs(rt);
  }
  std::vector<std::string> keys() const {
    std::vector<std::string> found;
    for (const auto& e : std::filesystem::directory_iterator(dir.path()))
      if (e.path().filename().string().rfind("clblast-", 0) == 0 && e.path().extension() == ".bin")
        found.push_back(e.path().stem().string());
    return found;
  }
};

}  // namespace

TEST_CASE("CLBlast's compiled GEMM program is kept, and handed back once CLBlast's own cache is empty") {
  if (!binaries::reachable())
    ANYCL_SKIP_TEST(Missing::installed_by_setup,
                    "CLBlast's binary cache is out of reach (not Debian's CLBlast 1.5 with libstdc++)");
  KeptGemm kept;
  auto& rt = kept.rt;
  const std::string program = anycl::detail::clblast_program_name(rt, "GEMM");
  CHECK(program.rfind("GEMM_Copy_", 0) == 0);
  CHECK(program.find("_XgemmDirect_") != std::string::npos);
  // The name anycl computes is the one CLBlast filed the binary under.
  REQUIRE_MESSAGE(clblast_holds_gemm(rt), program);

  CHECK(kept.written >= 1);
  CHECK(kept.keys().size() >= 1);
  CHECK(anycl::detail::keep_clblast_programs(rt) == 0);  // kept already: nothing written again

  clblast::ClearCache();  // as in a new process
  CHECK_FALSE(clblast_holds_gemm(rt));
  CHECK(anycl::detail::restore_clblast_programs(rt) >= 1);
  CHECK(clblast_holds_gemm(rt));
  check_gemm_exact(rt, 31, 19, 67);
  CHECK(anycl::detail::restore_clblast_programs(rt) == 0);  // held already
}

TEST_CASE("a kept CLBlast binary the device refuses is not handed over, and GEMM compiles as before") {
  if (!binaries::reachable())
    ANYCL_SKIP_TEST(Missing::installed_by_setup,
                    "CLBlast's binary cache is out of reach (not Debian's CLBlast 1.5 with libstdc++)");
  KeptGemm kept;
  auto& rt = kept.rt;
  const auto keys = kept.keys();
  REQUIRE(!keys.empty());
  // Intact entries (their checksums match) whose payload no driver builds.
  const anycl::detail::DiskCache cache(kept.dir.path());
  const std::string junk = "not a program binary";
  for (const auto& key : keys) REQUIRE(cache.put(key, std::vector<unsigned char>(junk.begin(), junk.end())));

  clblast::ClearCache();
  CHECK(anycl::detail::restore_clblast_programs(rt) == 0);
  CHECK_FALSE(clblast_holds_gemm(rt));
  check_gemm_exact(rt, 31, 19, 67);  // compiled from source
  CHECK(clblast_holds_gemm(rt));
  // The refused entry is replaced by the binary CLBlast compiled.
  CHECK(anycl::detail::keep_clblast_programs(rt) >= 1);
  bool replaced = false;
  for (const auto& key : keys) {
    const auto bytes = cache.get(key);
    replaced = replaced || (bytes && std::string(bytes->begin(), bytes->end()) != junk);
  }
  CHECK(replaced);
}

TEST_CASE(
    "a binary CLBlast holds that the driver refuses when CLBlast builds it costs a compilation, not the "
    "call") {
  if (!binaries::reachable())
    ANYCL_SKIP_TEST(Missing::installed_by_setup,
                    "CLBlast's binary cache is out of reach (not Debian's CLBlast 1.5 with libstdc++)");
  // Intel's CPU runtime refused, as CL_INVALID_BINARY, a kept GEMM binary it had built an instant before in
  // the same process (anycl's check passed, CLBlast's own build did not): every GEMM then failed. Here
  // CLBlast is handed a binary no driver loads, past anycl's check, as that one reached it.
  KeptGemm kept;
  auto& rt = kept.rt;
  const auto keys = kept.keys();
  REQUIRE(!keys.empty());
  clblast::ClearCache();
  const GemmProgram gemm(rt);
  const std::string junk = "not a program binary";
  REQUIRE(binaries::put(gemm.platform, gemm.program.c_str(), gemm.device.c_str(), junk.data(), junk.size()));
  CHECK(anycl::detail::restore_clblast_programs(rt) == 0);  // CLBlast holds one already (the junk)

  check_gemm_exact(rt, 29, 23, 61);  // refused, CLBlast's caches emptied, compiled from source, exact
  const auto held = gemm.held();
  REQUIRE(held.has_value());
  CHECK(*held != junk);
  check_gemm_exact(rt, 31, 19, 67);  // and on from the compiled program
}
