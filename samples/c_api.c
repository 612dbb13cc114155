/* anycl from C: train a small classifier on data the program makes itself, predict, save.
 * Everything goes through anycl.h (the C API), so the same calls work from any language that
 * can call C. Build: cc -std=c11 c_api.c $(pkg-config --cflags --libs anycl)
 * Run:   ./c_api [model.anycl]        (the device: $ANYCL_DEVICE, else the best one) */
#include <math.h>
#include <stdint.h>
#include <stdio.h>

#include "anycl/anycl.h"

enum { kSamples = 1000, kFeatures = 2, kClasses = 3 };

/* Stop on any failure with the library's message: every call returns a status. */
static int ok(anycl_status status, const char* what) {
  if (status == ANYCL_OK) return 1;
  fprintf(stderr, "%s failed (%s): %s\n", what, anycl_status_name(status), anycl_last_error());
  return 0;
}

/* Called at each epoch end; returning non-zero would stop training after the current step. */
static int print_epoch(const anycl_epoch* e, void* user) {
  (void)user;
  printf("epoch %u: loss %.4f, accuracy %.3f, validation accuracy %.3f\n", (unsigned)e->epoch, e->loss,
         e->accuracy, e->val_accuracy);
  return 0;
}

int main(int argc, char** argv) {
  const char* path = argc > 1 ? argv[1] : "c_api_model.anycl";
  if (!ok(anycl_check_version(ANYCL_API_VERSION), "anycl_check_version")) return 1;

  /* Three interleaved spirals: a point's class is its arm. Sample i is point (337 i mod 1000) of
   * the spirals, so the samples come shuffled and the validation tail covers every radius. */
  static float x[kSamples * kFeatures];
  static int32_t y[kSamples];
  for (int i = 0; i < kSamples; ++i) {
    const int point = (337 * i) % kSamples;
    const int arm = point % kClasses;
    const float r = (float)(point / kClasses) / (kSamples / kClasses);
    const float angle = 4.f * r + 2.0944f * (float)arm + 0.1f * sinf(37.f * (float)i);
    x[2 * i] = r * cosf(angle);
    x[2 * i + 1] = r * sinf(angle);
    y[i] = arm;
  }

  anycl_runtime* rt = NULL;
  anycl_dataset* data = NULL;
  anycl_model* model = NULL;
  int status = 1;
  if (!ok(anycl_runtime_create(NULL, &rt), "anycl_runtime_create")) goto done;
  if (!ok(anycl_dataset_create_classes(x, kSamples, kFeatures, y, kClasses, &data), "anycl_dataset_create"))
    goto done;

  /* The model in the command line's words: --layers 64,64 --dropout 0 for 2 inputs and 3 classes. */
  anycl_model_options mo;
  anycl_model_options_init(&mo);
  mo.layers = "64,64";
  mo.dropout = 0.f;
  mo.input_shape[0] = kFeatures;
  mo.outputs = kClasses;
  if (!ok(anycl_model_create(&mo, &model), "anycl_model_create")) goto done;

  anycl_train_options to;
  anycl_train_options_init(&to);
  to.epochs = 60;
  to.batch = 32;
  to.optimizer = "adam";
  to.lr = 0.01f;
  to.validation_split = 0.2; /* the last 20% (Keras' convention): shuffle first for real data */
  to.on_epoch = print_epoch;
  anycl_epoch history[60];
  size_t epochs = 0;
  if (!ok(anycl_train(model, rt, data, NULL, &to, history, 60, &epochs, NULL), "anycl_train")) goto done;

  /* Predict three points into our own buffer: one row of class probabilities each. */
  const float* probe = x + 2 * 500; /* samples 500, 501 and 502 */
  float probs[3 * kClasses];
  if (!ok(anycl_predict(model, rt, probe, 3, probs, 3 * kClasses), "anycl_predict")) goto done;
  for (int i = 0; i < 3; ++i)
    printf("sample %d (class %d): p = %.3f %.3f %.3f\n", 500 + i, (int)y[500 + i], probs[3 * i],
           probs[3 * i + 1], probs[3 * i + 2]);

  if (!ok(anycl_model_save(model, path), "anycl_model_save")) goto done;
  printf("model saved to %s (load it with anycl_model_load or `anycl eval --model`)\n", path);
  /* Exit 3 when it did not learn: the sample doubles as a test. */
  status = history[epochs - 1].val_accuracy >= 0.9 ? 0 : 3;

done:
  anycl_model_destroy(model);
  anycl_dataset_destroy(data);
  anycl_runtime_destroy(rt);
  return status;
}
