// Implementation of the shared test helpers.
#include "helpers.hpp"

#include <doctest/doctest.h>
#include <fmt/format.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace anycl::test {

Runtime& runtime() {
  static Runtime rt;
  return rt;
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
  FILE* pipe = popen((command_line + " 2>&1").c_str(), "r");
  REQUIRE_MESSAGE(pipe != nullptr, "popen failed for ", command_line);
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
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
  std::string pattern = (std::filesystem::temp_directory_path() / "anycl-test-XXXXXX").string();
  REQUIRE(mkdtemp(pattern.data()) != nullptr);
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ignored;
  std::filesystem::remove_all(path_, ignored);
}

}  // namespace anycl::test
