/* The C API's GEMM-free part (anycl_core), as a C11 program: version check, status names and the
 * thread's last error, the device list as JSON, runtimes from device specs, data sets and their
 * input checks. Needs no CLBlast, so it also runs under Wine (tools/check-windows.sh). */
#include <math.h>
#include <stdint.h>

#include "c_api_check.h"

static void version_and_errors(void) {
  CHECK(anycl_api_version() == ANYCL_API_VERSION);
  CHECK(strlen(anycl_version_string()) > 0);
  CHECK_STATUS(anycl_check_version(ANYCL_API_VERSION), ANYCL_OK, "");
  CHECK(strcmp(anycl_last_error(), "") == 0);
  CHECK_STATUS(anycl_check_version(ANYCL_API_VERSION + 1), ANYCL_ERROR_VERSION, "newer anycl");
  CHECK_STATUS(anycl_check_version(0), ANYCL_ERROR_VERSION, "C API version 0");
  CHECK(strcmp(anycl_status_name(ANYCL_ERROR_DATA), "ANYCL_ERROR_DATA") == 0);
  CHECK(strcmp(anycl_status_name((anycl_status)999), "ANYCL_ERROR_UNKNOWN_STATUS") == 0);
}

static void data_sets(void) {
  const float x[6] = {0, 1, 2, 3, 4, 5};
  const int32_t y[3] = {0, 1, 1};
  const float t[3] = {1, 2, 3};
  anycl_dataset* ds = NULL;
  size_t n = 0;
  CHECK_STATUS(anycl_dataset_create_classes(x, 3, 2, y, 2, &ds), ANYCL_OK, "");
  CHECK_STATUS(anycl_dataset_count(ds, &n), ANYCL_OK, "");
  CHECK(n == 3);
  anycl_dataset_destroy(ds);
  anycl_dataset_destroy(NULL);

  const int32_t bad[3] = {0, 2, 1};
  ds = (anycl_dataset*)1;
  CHECK_STATUS(anycl_dataset_create_classes(x, 3, 2, bad, 2, &ds), ANYCL_ERROR_INVALID_ARGUMENT, "y[1] = 2");
  CHECK(ds == NULL);
  const float nan_x[2] = {0.f, NAN};
  CHECK_STATUS(anycl_dataset_create_classes(nan_x, 1, 2, y, 2, &ds), ANYCL_ERROR_INVALID_ARGUMENT, "x[1]");
  CHECK_STATUS(anycl_dataset_create_classes(x, 0, 2, y, 2, &ds), ANYCL_ERROR_INVALID_ARGUMENT, "count is 0");
  CHECK_STATUS(anycl_dataset_create_classes(NULL, 3, 2, y, 2, &ds), ANYCL_ERROR_INVALID_ARGUMENT, "x is NULL");
  CHECK_STATUS(anycl_dataset_create_classes(x, 3, 2, y, 2, NULL), ANYCL_ERROR_INVALID_ARGUMENT, "out is NULL");

  const uint8_t pixels[6] = {0, 255, 7, 8, 9, 10};
  CHECK_STATUS(anycl_dataset_create_classes_u8(pixels, 3, 2, y, 2, &ds), ANYCL_OK, "");
  anycl_dataset_destroy(ds);
  CHECK_STATUS(anycl_dataset_create_classes_u8(pixels, 3, 2, bad, 2, &ds), ANYCL_ERROR_INVALID_ARGUMENT, "y[1]");

  CHECK_STATUS(anycl_dataset_create_targets(x, 3, 2, t, 1, &ds), ANYCL_OK, "");
  anycl_dataset_destroy(ds);
  const float inf_t[3] = {1, INFINITY, 3};
  CHECK_STATUS(anycl_dataset_create_targets(x, 3, 2, inf_t, 1, &ds), ANYCL_ERROR_INVALID_ARGUMENT, "t[1]");
}

static int devices_and_runtimes(void) {
  size_t length = 0;
  anycl_status s = anycl_devices_json(NULL, 0, &length);
  if (s == ANYCL_ERROR_DEVICE) return skip_or_fail(anycl_last_error());
  CHECK(s == ANYCL_ERROR_BUFFER_TOO_SMALL && length > 2);
  char* json = (char*)malloc(length + 1);
  CHECK_STATUS(anycl_devices_json(json, length, &length), ANYCL_ERROR_BUFFER_TOO_SMALL, "needs");
  CHECK_STATUS(anycl_devices_json(json, length + 1, &length), ANYCL_OK, "");
  CHECK(json[0] == '[' && strstr(json, "\"selected\": true") && strstr(json, "\"name\": "));
  free(json);

  anycl_runtime* rt = (anycl_runtime*)1;
  CHECK_STATUS(anycl_runtime_create("no-such-device-xyz", &rt), ANYCL_ERROR_DEVICE, "no-such-device-xyz");
  CHECK(rt == NULL);
  CHECK_STATUS(anycl_runtime_create(NULL, &rt), ANYCL_OK, "");
  char name[256];
  CHECK_STATUS(anycl_runtime_device_name(rt, name, sizeof name, &length), ANYCL_OK, "");
  CHECK(length > 0 && strlen(name) == length);
  CHECK_STATUS(anycl_runtime_device_name(NULL, name, sizeof name, &length), ANYCL_ERROR_INVALID_ARGUMENT,
               "runtime is NULL");
  anycl_runtime_destroy(rt);
  anycl_runtime_destroy(NULL);
  return 0;
}

int main(void) {
  version_and_errors();
  data_sets();
  const int skipped = devices_and_runtimes();
  if (skipped) return c_api_failures ? 1 : skipped;
  if (c_api_failures) fprintf(stderr, "%d check(s) failed\n", c_api_failures);
  return c_api_failures ? 1 : 0;
}
