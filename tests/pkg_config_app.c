/* An application as the README tells its author to build it, against a `cmake --install --prefix`
 * tree: `cc -std=c11 app.c $(pkg-config --cflags --libs anycl)`. It trains a regressor, saves it,
 * loads it back and checks the predictions are bit-equal. Exit 77: no OpenCL device here. */
#include <anycl/anycl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define OK(call)                                                     \
  do {                                                               \
    if ((call) != ANYCL_OK) {                                        \
      fprintf(stderr, "%s failed: %s\n", #call, anycl_last_error()); \
      return 1;                                                      \
    }                                                                \
  } while (0)

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "app.anycl";
  if (anycl_check_version(ANYCL_API_VERSION) != ANYCL_OK)
    return fprintf(stderr, "%s\n", anycl_last_error()), 1;
  anycl_runtime* rt = NULL;
  if (anycl_runtime_create(NULL, &rt) != ANYCL_OK) {
    fprintf(stderr, "[anycl test skipped] no OpenCL device: %s\n", anycl_last_error());
    const char* ci = getenv("CI");
    return ci && strcmp(ci, "true") == 0 ? 1 : 77;
  }
  float x[256], t[128];
  for (int i = 0; i < 128; ++i) {
    x[2 * i] = (float)i / 64.f - 1.f;
    x[2 * i + 1] = (float)(i % 7) / 7.f;
    t[i] = 2.f * x[2 * i] - x[2 * i + 1];
  }
  anycl_model_options mo;
  anycl_model_options_init(&mo);
  mo.layers = "8:tanh";
  mo.dropout = 0.f;
  mo.loss = "mse";
  mo.input_shape[0] = 2;
  mo.outputs = 1;
  anycl_model* model = NULL;
  OK(anycl_model_create(&mo, &model));
  anycl_dataset* data = NULL;
  OK(anycl_dataset_create_targets(x, 128, 2, t, 1, &data));
  anycl_train_options to;
  anycl_train_options_init(&to);
  to.epochs = 3;
  to.batch = 16;
  OK(anycl_train(model, rt, data, NULL, &to, NULL, 0, NULL, NULL));
  OK(anycl_model_save(model, path));
  anycl_model* loaded = NULL;
  OK(anycl_model_load(path, &loaded));
  float a[128], b[128];
  OK(anycl_predict(model, rt, x, 128, a, 128));
  OK(anycl_predict(loaded, rt, x, 128, b, 128));
  double mse = 0, mae = 0;
  OK(anycl_evaluate_metric(loaded, rt, data, &mse, &mae));
  const int same = memcmp(a, b, sizeof a) == 0;
  printf("regressor saved and reloaded: predictions %s, mse %.4f, mae %.4f\n", same ? "bit-equal" : "DIFFER",
         mse, mae);
  anycl_model_destroy(loaded);
  anycl_dataset_destroy(data);
  anycl_model_destroy(model);
  anycl_runtime_destroy(rt);
  return same ? 0 : 1;
}
