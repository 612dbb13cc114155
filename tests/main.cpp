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
  const int status = doctest::Context(argc, argv).run();
  anycl::test::release_runtime();
  return status;
}
