// `anycl cache info|clear|warm` on a scratch cache folder: warm fills it, a second warm compiles
// nothing, clear empties the kernels but keeps tuning files unless --all.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "helpers.hpp"

using anycl::test::anycl_cli;
using anycl::test::run_command;

namespace {
size_t files_in(const std::string& dir, const std::string& suffix) {
  size_t n = 0;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = e.path().filename().string();
    n +=
        name.size() >= suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0;
  }
  return n;
}
}  // namespace

TEST_CASE("anycl cache warm then info then clear") {
  anycl::test::TempDir tmp;
  const std::string dir = tmp.file("cache");
  const std::string cli = fmt::format("ANYCL_CACHE_DIR={} {}", dir, anycl_cli());

  auto r = run_command(cli + " cache info");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(r.output.find("(not created yet)") != std::string::npos);
  CHECK(r.output.find("compiled kernels: 0 files") != std::string::npos);

  r = run_command(cli + " cache warm");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(r.output.find("0 already cached") != std::string::npos);
  const size_t kernels = files_in(dir, ".bin");
  CHECK(kernels >= 6);  // one per cl_kernels/ program, at least

  r = run_command(cli + " cache warm");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(r.output.find(" 0 compiled and cached") != std::string::npos);
  CHECK(files_in(dir, ".bin") == kernels);

  std::ofstream(dir + "/clblast-tuning-0123456789abcdef.txt") << "anycl-clblast-tuning 1\n# a tuning file\n";
  r = run_command(cli + " cache info --verbose");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(r.output.find(fmt::format("compiled kernels: {} files", kernels)) != std::string::npos);
  CHECK(r.output.find("tuning files: 1 files") != std::string::npos);
  CHECK(r.output.find("activation-") != std::string::npos);

  r = run_command(cli + " cache clear");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(files_in(dir, ".bin") == 0);
  CHECK(files_in(dir, ".txt") == 1);
  r = run_command(cli + " cache clear --all");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(files_in(dir, ".txt") == 0);
  CHECK(r.output.find("removed 1 file ") != std::string::npos);
}

TEST_CASE("anycl cache clear removes only files anycl wrote") {
  anycl::test::TempDir tmp;
  const std::string dir = tmp.path(), cli = fmt::format("ANYCL_CACHE_DIR={} {}", dir, anycl_cli());
  // Files a user keeps beside the cache that the old name patterns ("*-*.bin", "*.tmp.*") matched.
  const std::vector<std::string> foreign = {
      "backup-2024.bin", "photo.tmp.jpg", "activation-0123456789abcdef.bin",
      "clblast-tuning-0123456789abcdef.txt", "clblast-tuning-notes.txt"};
  for (const auto& name : foreign) std::ofstream(dir + "/" + name) << "user data\n";
  // A temporary of a writer that no longer runs (pid beyond any pid_max) is anycl's litter.
  const std::string stale = dir + "/softmax_xent-00000000000000aa.bin.tmp.999999999.0123456789abcdef";
  std::ofstream(stale) << "half an entry";
  const auto r = run_command(cli + " cache clear --all");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  for (const auto& name : foreign) CHECK_MESSAGE(std::filesystem::exists(dir + "/" + name), name);
  CHECK_FALSE(std::filesystem::exists(stale));
  CHECK_MESSAGE(r.output.find("removed 1 file ") != std::string::npos, r.output);
}

TEST_CASE("anycl cache usage errors") {
  CHECK(run_command(anycl_cli() + " cache").exit_code == 2);
  CHECK(run_command(anycl_cli() + " cache frobnicate").exit_code == 2);
  CHECK(run_command(anycl_cli() + " cache info --all").exit_code == 2);
  const auto r = run_command("ANYCL_CACHE=off " + anycl_cli() + " cache info");
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("ANYCL_CACHE") != std::string::npos);
}
