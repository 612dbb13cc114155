// Implementation of the shared test helpers.
#include "helpers.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>

#include "background.hpp"
#include "runtime/disk_cache.hpp"
#include "util/platform.hpp"
#include "util/process.hpp"

namespace anycl::test {

namespace {
std::unique_ptr<Runtime>& shared_runtime() {
  static std::unique_ptr<Runtime> rt;
  return rt;
}
}  // namespace

Runtime& runtime() {
  auto& rt = shared_runtime();
  if (!rt) rt = std::make_unique<Runtime>();
  return *rt;
}

void release_runtime() { shared_runtime().reset(); }

std::string seeded_kernel_cache(const std::string& folder) {
  namespace fs = std::filesystem;
  Runtime& rt = runtime();
  const std::string from = rt.stats().cache_dir;
  fs::create_directories(folder);
  if (from.empty()) return folder;  // the disk cache is off: the test compiles, as it would anyway
  const std::vector<std::string> programs = rt.program_names();
  for (const auto& entry : fs::directory_iterator(from)) {
    const std::string name = entry.path().filename().string();
    if (!entry.is_regular_file() || !detail::is_cache_entry_name(name) ||
        std::find(programs.begin(), programs.end(), name.substr(0, name.rfind('-'))) == programs.end())
      continue;
    // DiskCache::put writes an entry atomically: one another test process is writing is never half-read.
    std::error_code ignored;
    fs::copy_file(entry.path(), fs::path(folder) / name, fs::copy_options::skip_existing, ignored);
  }
  return folder;
}

std::vector<std::string> driver_cache_files(const std::string& folder) {
  namespace fs = std::filesystem;
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(folder))
    if (const std::string name = entry.path().filename().string();
        entry.is_regular_file() && name != "last_accessed" && name.rfind("tempfile_", 0) != 0)
      files.push_back(fs::relative(entry.path(), folder).generic_string());
  std::sort(files.begin(), files.end());
  return files;
}

void check_close(const std::vector<float>& dev, const std::vector<float>& ref, double atol, double rtol,
                 const std::string& what) {
  REQUIRE_MESSAGE(dev.size() == ref.size(), what, ": size ", dev.size(), " vs reference ", ref.size());
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < dev.size(); ++i) {
    const double d = dev[i], r = ref[i];
    const bool ok = std::abs(d - r) <= atol + rtol * std::abs(r);  // NaN compares false: fails
    if (!ok && bad++ == 0) first = i;
  }
  if (bad)
    FAIL_CHECK(fmt::format("{}: {} of {} elements differ; first at index {}: device {} vs reference {}", what,
                           bad, dev.size(), first, dev[first], ref[first]));
}

std::vector<float> random_floats(size_t n, float lo, float hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

std::vector<float> random_ints(size_t n, int lo, int hi, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_int_distribution<int> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = float(dist(rng));
  return v;
}

CommandResult run_command(const std::string& command_line) {
  CommandResult result;
  // Without `exec`: the line may be a compound command. " 2>&1" as popen's callers always had it.
  std::vector<std::string> shell = shell_command(command_line);
  shell.back() = command_line + " 2>&1";
  const detail::platform::ProcessExit e = detail::platform::run_process({shell, {}}, &result.output);
  result.exit_code = e.signal ? 128 + e.signal : e.code;
  return result;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string anycl_cli() { return ANYCL_CLI; }

void skip(Missing kind, const std::string& reason) {
  const char* ci = std::getenv("CI");
  if (kind == Missing::installed_by_setup && ci && std::string(ci) == "true")
    FAIL("CI=true and a component the set-up installs is missing: ", reason);
  // Straight to stdout: doctest shows MESSAGE only for failing tests, and CTest reads this line.
  std::printf("%s %s\n", kSkipMarker, reason.c_str());
  std::fflush(stdout);
}

void expect_train_usage_errors(const std::vector<std::pair<std::string, std::string>>& cases) {
  for (const auto& item : cases) {
    const std::string& flags = item.first;
    CAPTURE(flags);
    const auto r = run_command(fmt::format("{} train --limit 10 {}", anycl_cli(), flags));
    CHECK(r.exit_code == 2);
    CHECK_MESSAGE(r.output.find(item.second) != std::string::npos, r.output);
  }
}

TempDir::TempDir() {
  std::error_code ec;
  path_ = detail::platform::create_private_folder(std::filesystem::temp_directory_path(), "anycl-test-", ec)
              .string();
  REQUIRE_MESSAGE(!ec, "cannot create a temporary folder: ", ec.message());
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace anycl::test
