// The doctest runner for every suite in tests/. The tests run CLBlast with its defaults unless a test
// says otherwise: the shipped tuning database is off for this process and the anycl it starts
// (ANYCL_TUNING_DATABASE=off; tests of the database turn it back on for themselves).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <cstdio>
#include <string_view>

#include "helpers.hpp"
#include "util/platform.hpp"

namespace {

// How many test cases the run's filters let through (-1: no run, as when listing).
int g_selected = -1;

// CTest runs one test case per command (--test-case=NAME). A NAME the filter reads otherwise selects
// nothing, and doctest would pass: a ';' splits CMake's list, so the command names only the part
// before it (two tests never ran so); a non-ASCII character did not survive Wine's command line (one
// test never ran under Wine). This listener lets main fail such a run instead.
struct SelectionCounter : doctest::IReporter {
  explicit SelectionCounter(const doctest::ContextOptions& /*options*/) {}
  void report_query(const doctest::QueryData& /*data*/) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats& stats) override {
    g_selected = int(stats.numTestCasesPassingFilters);
  }
  void test_case_start(const doctest::TestCaseData& /*data*/) override {}
  void test_case_reenter(const doctest::TestCaseData& /*data*/) override {}
  void test_case_end(const doctest::CurrentTestCaseStats& /*stats*/) override {}
  void test_case_exception(const doctest::TestCaseException& /*exception*/) override {}
  void subcase_start(const doctest::SubcaseSignature& /*signature*/) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData& /*data*/) override {}
  void log_message(const doctest::MessageData& /*data*/) override {}
  void test_case_skipped(const doctest::TestCaseData& /*data*/) override {}
};
REGISTER_LISTENER("selection_counter", 1, SelectionCounter);

bool names_test_cases(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view arg = argv[i];
    if (arg.rfind("--test-case=", 0) == 0 || arg.rfind("-tc=", 0) == 0) return true;
  }
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  if (!anycl::detail::platform::get_env("ANYCL_TUNING_DATABASE"))
    anycl::detail::platform::set_env("ANYCL_TUNING_DATABASE", "off");
  // No first-use tuning in the CLI tests either (minutes each); test_first_use_tuning turns it on.
  if (!anycl::detail::platform::get_env("ANYCL_AUTOTUNE"))
    anycl::detail::platform::set_env("ANYCL_AUTOTUNE", "off");
  const int status = doctest::Context(argc, argv).run();
  anycl::test::release_runtime();
  if (status == 0 && g_selected == 0 && names_test_cases(argc, argv)) {
    std::fprintf(stderr,
                 "no test case matches the --test-case filter: rename the test so that CTest can name "
                 "it (no ';', plain ASCII)\n");
    return 1;
  }
  return status;
}
