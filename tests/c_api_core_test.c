/* The C API's GEMM-free part as a C11 program: version check, status names and the thread's last
 * error, the device list as JSON, runtimes from device specs, data sets and their input checks.
 * Built twice: c_api_core_test links anycl_core alone (no CLBlast); c_api_library_test
 * (ANYCL_TEST_LIBRARY) links the library itself — libanycl.so, or anycl.dll through its import
 * library — and adds building models. Neither calls GEMM, so both run under Wine
 * (tools/check-windows.sh), where no clblast.dll exists: there ANYCL_TEST_NO_CLBLAST names the
 * missing DLL and the library test checks that training fails with an error naming it. */
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
  CHECK_STATUS(anycl_dataset_create_classes(x, 3, 2, bad, 2, &ds), ANYCL_ERROR_INVALID_ARGUMENT,
               "labels[1] is 2");
  CHECK(ds == NULL);
  const float nan_x[2] = {0.f, NAN};
  CHECK_STATUS(anycl_dataset_create_classes(nan_x, 1, 2, y, 2, &ds), ANYCL_ERROR_INVALID_ARGUMENT, "x[1]");
  CHECK_STATUS(anycl_dataset_create_classes(x, 0, 2, y, 2, &ds), ANYCL_ERROR_INVALID_ARGUMENT, "count is 0");
  CHECK_STATUS(anycl_dataset_create_classes(NULL, 3, 2, y, 2, &ds), ANYCL_ERROR_INVALID_ARGUMENT,
               "x is NULL");
  CHECK_STATUS(anycl_dataset_create_classes(x, 3, 2, y, 2, NULL), ANYCL_ERROR_INVALID_ARGUMENT,
               "out is NULL");

  const uint8_t pixels[6] = {0, 255, 7, 8, 9, 10};
  CHECK_STATUS(anycl_dataset_create_classes_u8(pixels, 3, 2, y, 2, &ds), ANYCL_OK, "");
  anycl_dataset_destroy(ds);
  CHECK_STATUS(anycl_dataset_create_classes_u8(pixels, 3, 2, bad, 2, &ds), ANYCL_ERROR_INVALID_ARGUMENT,
               "labels[1]");

  CHECK_STATUS(anycl_dataset_create_targets(x, 3, 2, t, 1, &ds), ANYCL_OK, "");
  anycl_dataset_destroy(ds);
  const float inf_t[3] = {1, INFINITY, 3};
  CHECK_STATUS(anycl_dataset_create_targets(x, 3, 2, inf_t, 1, &ds), ANYCL_ERROR_INVALID_ARGUMENT,
               "targets[1]");
}

#ifdef ANYCL_TEST_LIBRARY
/* Models are built from their description on the host (the layer registry): no device, no GEMM. */
static void models(void) {
  anycl_model_options mo;
  anycl_model_options_init(&mo);
  CHECK(mo.struct_size == sizeof mo && mo.dropout > 0.f);
  mo.layers = "16,8";
  mo.input_shape[0] = 4;
  mo.outputs = 3;
  anycl_model* model = NULL;
  CHECK_STATUS(anycl_model_create(&mo, &model), ANYCL_OK, "");
  size_t n = 0, length = 0;
  CHECK_STATUS(anycl_model_input_size(model, &n), ANYCL_OK, "");
  CHECK(n == 4);
  CHECK_STATUS(anycl_model_output_size(model, &n), ANYCL_OK, "");
  CHECK(n == 3);
  char text[4096];
  CHECK_STATUS(anycl_model_loss(model, text, sizeof text, &length), ANYCL_OK, "");
  CHECK(strcmp(text, "softmax_cross_entropy") == 0);
  int has_weights = 1;
  CHECK_STATUS(anycl_model_has_weights(model, &has_weights), ANYCL_OK, "");
  CHECK(has_weights == 0);
  /* 4·16+16 + 16·8+8 + 8·3+3 parameters */
  CHECK_STATUS(anycl_model_summary(model, text, sizeof text, &length), ANYCL_OK, "");
  CHECK(strstr(text, "Dense") && strstr(text, "Total params: 243"));
  CHECK_STATUS(anycl_model_save(model, "never-written.anycl"), ANYCL_ERROR_INVALID_ARGUMENT, "no weights");
  anycl_model_destroy(model);
  anycl_model_destroy(NULL);

  mo.layers = "conv4x3,pool2,flatten,16";
  mo.dropout = 0.f;
  mo.input_shape[0] = 1;
  mo.input_shape[1] = 8;
  mo.input_shape[2] = 8;
  mo.outputs = 2;
  CHECK_STATUS(anycl_model_create(&mo, &model), ANYCL_OK, "");
  CHECK_STATUS(anycl_model_summary(model, text, sizeof text, &length), ANYCL_OK, "");
  CHECK(strstr(text, "Conv2D") && strstr(text, "MaxPooling2D"));
  CHECK_STATUS(anycl_model_input_size(model, &n), ANYCL_OK, "");
  CHECK(n == 64);
  anycl_model_destroy(model);

  anycl_model* bad = (anycl_model*)1;
  mo.layers = "conv4x3,bogus";
  CHECK_STATUS(anycl_model_create(&mo, &bad), ANYCL_ERROR_INVALID_ARGUMENT, "bogus");
  CHECK(bad == NULL);
  mo.layers = "16";
  mo.loss = "hinge";
  CHECK_STATUS(anycl_model_create(&mo, &bad), ANYCL_ERROR_INVALID_ARGUMENT, "hinge");
  mo.loss = "mse";
  mo.outputs = 0;
  CHECK_STATUS(anycl_model_create(&mo, &bad), ANYCL_ERROR_INVALID_ARGUMENT, "outputs is 0");
  CHECK_STATUS(anycl_model_load("no-such-folder/model.anycl", &bad), ANYCL_ERROR_DATA, "no-such-folder");
  CHECK(bad == NULL);
}

/* Where CLBlast's DLL is missing (Windows, delay-loaded), the first GEMM fails with an error that
 * names the DLL — twice, the same way — and the runtime and model stay usable. */
static void gemm_without_clblast(anycl_runtime* rt, const char* dll) {
  const float x[8] = {0, 1, 1, 0, 0, 0, 1, 1};
  const int32_t y[4] = {0, 1, 0, 1};
  anycl_dataset* data = NULL;
  CHECK_STATUS(anycl_dataset_create_classes(x, 4, 2, y, 2, &data), ANYCL_OK, "");
  anycl_model* model = flat_model("4", NULL, 2, 2);
  const anycl_train_options to = train_options(1, 2, NULL);
  for (int i = 0; i < 2; ++i) {
    CHECK_STATUS(anycl_train(model, rt, data, NULL, &to, NULL, 0, NULL, NULL), ANYCL_ERROR_UNSUPPORTED, dll);
    CHECK(strstr(anycl_last_error(), "PATH") != NULL);
  }
  int has_weights = 1;
  CHECK_STATUS(anycl_model_has_weights(model, &has_weights), ANYCL_OK, "");
  CHECK(has_weights == 0);
  anycl_model_destroy(model);
  anycl_dataset_destroy(data);
}
#endif

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
#ifdef ANYCL_TEST_LIBRARY
  const char* missing_clblast = getenv("ANYCL_TEST_NO_CLBLAST");
  if (missing_clblast && *missing_clblast) gemm_without_clblast(rt, missing_clblast);
#endif
  anycl_runtime_destroy(rt);
  anycl_runtime_destroy(NULL);
  return 0;
}

int main(void) {
  version_and_errors();
  data_sets();
#ifdef ANYCL_TEST_LIBRARY
  models();
#endif
  const int skipped = devices_and_runtimes();
  if (skipped) return c_api_failures ? 1 : skipped;
  if (c_api_failures) fprintf(stderr, "%d check(s) failed\n", c_api_failures);
  return c_api_failures ? 1 : 0;
}
