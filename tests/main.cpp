// The doctest runner for every suite in tests/. The tests run CLBlast with its defaults unless a test
// says otherwise: the shipped tuning database is off for this process and the anycl it starts
// (ANYCL_TUNING_DATABASE=off; tests of the database turn it back on for themselves).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include "helpers.hpp"
#include "util/platform.hpp"

int main(int argc, char** argv) {
  if (!anycl::detail::platform::get_env("ANYCL_TUNING_DATABASE"))
    anycl::detail::platform::set_env("ANYCL_TUNING_DATABASE", "off");
  // No first-use tuning in the CLI tests either (minutes each); test_first_use_tuning turns it on.
  if (!anycl::detail::platform::get_env("ANYCL_AUTOTUNE"))
    anycl::detail::platform::set_env("ANYCL_AUTOTUNE", "off");
  const int status = doctest::Context(argc, argv).run();
  anycl::test::release_runtime();
  return status;
}
