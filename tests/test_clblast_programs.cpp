// CLBlast's compiled programs kept in anycl's kernel cache between processes
// (src/blas/clblast_program_store.hpp): the name anycl computes for a program is the one CLBlast
// files it under, a kept binary is handed back after CLBlast's cache is emptied (as in a new
// process) and GEMM stays exact, and a kept binary the device refuses is never handed over.
#include <clblast.h>
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <anycl/blas/blas.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "blas/clblast_binary_cache.hpp"
#include "blas/clblast_program_store.hpp"
#include "helpers.hpp"
#include "reference/gemm.hpp"
#include "runtime/disk_cache.hpp"

namespace {

using anycl::test::Missing;
namespace binaries = anycl::detail::clblast_binaries;

// A GEMM through CLBlast, checked exactly against the reference (small integers).
void check_gemm_exact(anycl::Runtime& rt, size_t m, size_t n, size_t k) {
  const auto a = anycl::test::random_ints(m * k, -3, 3, 21), b = anycl::test::random_ints(k * n, -3, 3, 22);
  auto ta = anycl::Tensor::from_host(rt, {m, k}, a), tb = anycl::Tensor::from_host(rt, {k, n}, b);
  anycl::Tensor tc(rt, {m, n});
  tc.fill(-999.f);
  anycl::matmul(ta, anycl::Trans::no, tb, anycl::Trans::no, tc);
  std::vector<float> ref(m * n);
  anycl::reference::gemm(false, false, m, n, k, 1.f, a.data(), k, b.data(), n, 0.f, ref.data(), n);
  anycl::test::check_close(tc.download(), ref, 0, 0, fmt::format("gemm {}x{}x{}", m, n, k));
}

// Whether CLBlast holds a binary for the GEMM program at its current parameters.
bool clblast_holds_gemm(anycl::Runtime& rt) {
  cl_platform_id platform = nullptr;
  clGetDeviceInfo(rt.info().id, CL_DEVICE_PLATFORM, sizeof platform, &platform, nullptr);
  const std::string program = anycl::detail::clblast_program_name(rt, "GEMM");
  const std::string device = anycl::detail::clblast_device_name(rt.info().id);
  return binaries::get(
      platform, program.c_str(), device.c_str(), [](void*, const char*, size_t) {}, nullptr);
}

std::vector<std::string> kept_entries(const std::string& dir) {
  std::vector<std::string> keys;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("clblast-", 0) == 0 && e.path().extension() == ".bin")
      keys.push_back(e.path().stem().string());
  }
  return keys;
}

}  // namespace

TEST_CASE("CLBlast's compiled GEMM program is kept, and handed back once CLBlast's own cache is empty") {
  if (!binaries::reachable())
    ANYCL_SKIP_TEST(Missing::installed_by_setup,
                    "CLBlast's binary cache is out of reach (not Debian's CLBlast 1.5 with libstdc++)");
  anycl::test::TempDir dir;
  const anycl::test::ScopedEnv cache_dir("ANYCL_CACHE_DIR", dir.path());
  auto& rt = anycl::test::runtime();
  check_gemm_exact(rt, 33, 17, 65);  // CLBlast has compiled (or held) the GEMM program
  const std::string program = anycl::detail::clblast_program_name(rt, "GEMM");
  CHECK(program.rfind("GEMM_Copy_", 0) == 0);
  CHECK(program.find("_XgemmDirect_") != std::string::npos);
  // The name anycl computes is the one CLBlast filed the binary under.
  REQUIRE_MESSAGE(clblast_holds_gemm(rt), program);

  CHECK(anycl::detail::keep_clblast_programs(rt) >= 1);
  CHECK(kept_entries(dir.path()).size() >= 1);
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
  anycl::test::TempDir dir;
  const anycl::test::ScopedEnv cache_dir("ANYCL_CACHE_DIR", dir.path());
  auto& rt = anycl::test::runtime();
  check_gemm_exact(rt, 33, 17, 65);
  anycl::detail::keep_clblast_programs(rt);
  const auto keys = kept_entries(dir.path());
  REQUIRE(!keys.empty());
  // Intact entries (their checksums match) whose payload no driver builds.
  const anycl::detail::DiskCache cache(dir.path());
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
