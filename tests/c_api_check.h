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

#define CHECK(cond)                                                                           \
  do {                                                                                        \
    if (!(cond)) {                                                                            \
      fprintf(stderr, "%s:%d: CHECK(%s) failed; last error: %s\n", __FILE__, __LINE__, #cond, \
              anycl_last_error());                                                            \
      ++c_api_failures;                                                                       \
    }                                                                                         \
  } while (0)

/* CHECK that `call` returned `status` and, for a failure, left a message naming `word`. */
#define CHECK_STATUS(call, status, word)                                                               \
  do {                                                                                                 \
    anycl_status s_ = (call);                                                                          \
    if (s_ != (status) || ((status) != ANYCL_OK && !strstr(anycl_last_error(), (word)))) {             \
      fprintf(stderr, "%s:%d: %s returned %s, expected %s with '%s' in the message; last error: %s\n", \
              __FILE__, __LINE__, #call, anycl_status_name(s_), anycl_status_name(status), (word),     \
              anycl_last_error());                                                                     \
      ++c_api_failures;                                                                                \
    }                                                                                                  \
  } while (0)

/* A model of `layers` on flat inputs of `inputs` features with `outputs` outputs, no dropout, and
 * `loss` (NULL: the default); NULL after a failed CHECK. */
static inline anycl_model* flat_model(const char* layers, const char* loss, size_t inputs, size_t outputs) {
  anycl_model_options mo;
  anycl_model_options_init(&mo);
  mo.layers = layers;
  if (loss) mo.loss = loss;
  mo.dropout = 0.f;
  mo.input_shape[0] = inputs;
  mo.outputs = outputs;
  anycl_model* model = NULL;
  CHECK_STATUS(anycl_model_create(&mo, &model), ANYCL_OK, "");
  return model;
}

/* Training options with `epochs`, `batch` and `optimizer` (NULL: the default); the rest default. */
static inline anycl_train_options train_options(size_t epochs, size_t batch, const char* optimizer) {
  anycl_train_options to;
  anycl_train_options_init(&to);
  to.epochs = epochs;
  to.batch = batch;
  if (optimizer) to.optimizer = optimizer;
  return to;
}

/* 77 (skipped) when no OpenCL device exists, unless CI=true, where that is a failure. */
static int skip_or_fail(const char* why) {
  const char* ci = getenv("CI");
  fprintf(stderr, "[anycl test skipped] %s\n", why);
  return ci && strcmp(ci, "true") == 0 ? 1 : 77;
}

#endif
