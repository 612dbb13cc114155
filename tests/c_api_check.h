/* A tiny check harness for the C API's C11 test programs: each failed CHECK prints its line and
 * the library's last error; main() returns the failure count (0: passed). Exit code 77 tells CTest
 * the test was skipped (no OpenCL device here, outside CI). */
#ifndef ANYCL_TESTS_C_API_CHECK_H
#define ANYCL_TESTS_C_API_CHECK_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "anycl/anycl.h"

static int c_api_failures = 0;

#define CHECK(cond)                                                                        \
  do {                                                                                     \
    if (!(cond)) {                                                                         \
      fprintf(stderr, "%s:%d: CHECK(%s) failed; last error: %s\n", __FILE__, __LINE__, #cond, \
              anycl_last_error());                                                         \
      ++c_api_failures;                                                                    \
    }                                                                                      \
  } while (0)

/* CHECK that `call` returned `status` and, for a failure, left a message naming `word`. */
#define CHECK_STATUS(call, status, word)                                                                 \
  do {                                                                                                   \
    anycl_status s_ = (call);                                                                            \
    if (s_ != (status) || ((status) != ANYCL_OK && !strstr(anycl_last_error(), (word)))) {              \
      fprintf(stderr, "%s:%d: %s returned %s, expected %s with '%s' in the message; last error: %s\n", \
              __FILE__, __LINE__, #call, anycl_status_name(s_), anycl_status_name(status), (word),      \
              anycl_last_error());                                                                       \
      ++c_api_failures;                                                                                  \
    }                                                                                                    \
  } while (0)

/* 77 (skipped) when no OpenCL device exists, unless CI=true, where that is a failure. */
static int skip_or_fail(const char* why) {
  const char* ci = getenv("CI");
  fprintf(stderr, "[anycl test skipped] %s\n", why);
  return ci && strcmp(ci, "true") == 0 ? 1 : 77;
}

#endif
