/* The C API end to end, as a C11 program on the test device: models from the --layers grammar
 * (MLP, CNN, regression), training with callbacks that stop it, evaluate, predict into a caller
 * buffer, save → load → predict equal, ONNX export, and the errors for bad calls. */
#include <math.h>
#include <stdint.h>

#include "c_api_check.h"

enum { kSamples = 512 };

/* Two classes: inside or outside a circle of radius 0.6 (a deterministic grid). */
static void circle_data(float* x, int32_t* y, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const float a = (float)(i % 23) / 11.f - 1.f, b = (float)((i * 7) % 29) / 14.f - 1.f;
    x[2 * i] = a;
    x[2 * i + 1] = b;
    y[i] = a * a + b * b < 0.36f ? 1 : 0;
  }
}

static int stop_at_epoch_two(const anycl_epoch* e, void* user) {
  (void)user;
  return e->epoch >= 2;
}

static int count_progress(const anycl_progress* p, void* user) {
  (void)p;
  ++*(int*)user;
  return 1; /* stop after the current step */
}

static void classifier(anycl_runtime* rt, const char* folder) {
  static float x[2 * kSamples];
  static int32_t y[kSamples];
  circle_data(x, y, kSamples);
  anycl_dataset* data = NULL;
  CHECK_STATUS(anycl_dataset_create_classes(x, kSamples, 2, y, 2, &data), ANYCL_OK, "");

  anycl_model* model = flat_model("32,32", NULL, 2, 2);
  size_t in = 0, out = 0;
  CHECK_STATUS(anycl_model_input_size(model, &in), ANYCL_OK, "");
  CHECK_STATUS(anycl_model_output_size(model, &out), ANYCL_OK, "");
  CHECK(in == 2 && out == 2);
  float probs[2 * 4];
  CHECK_STATUS(anycl_predict(model, rt, x, 4, probs, 8), ANYCL_ERROR_INVALID_ARGUMENT, "no weights");
  CHECK_STATUS(anycl_model_save(model, "never-written.anycl"), ANYCL_ERROR_INVALID_ARGUMENT, "no weights");

  anycl_train_options to = train_options(40, 32, "adam");
  to.lr = 0.01f;
  anycl_epoch history[40];
  size_t done = 0;
  int stopped = 1;
  CHECK_STATUS(anycl_train(model, rt, data, NULL, &to, history, 40, &done, &stopped), ANYCL_OK, "");
  CHECK(done == 40 && stopped == 0);
  CHECK(history[39].loss < history[0].loss && history[39].accuracy > 0.9);
  double loss = 0, accuracy = 0;
  CHECK_STATUS(anycl_evaluate(model, rt, data, &loss, &accuracy), ANYCL_OK, "");
  CHECK(accuracy > 0.9 && loss > 0);

  /* predict: probabilities into the caller's buffer; a short buffer is an error, not an overrun */
  CHECK_STATUS(anycl_predict(model, rt, x, 4, probs, 7), ANYCL_ERROR_INVALID_ARGUMENT, "need 8");
  CHECK_STATUS(anycl_predict(model, rt, x, 4, probs, 8), ANYCL_OK, "");
  for (int i = 0; i < 4; ++i) CHECK(fabsf(probs[2 * i] + probs[2 * i + 1] - 1.f) < 1e-5f);
  const float nan_x[2] = {0.f, NAN};
  CHECK_STATUS(anycl_predict(model, rt, nan_x, 1, probs, 8), ANYCL_ERROR_INVALID_ARGUMENT, "x[1]");

  /* save → load → predict equal, bit for bit */
  char path[1024];
  snprintf(path, sizeof path, "%s/model.anycl", folder);
  CHECK_STATUS(anycl_model_save(model, path), ANYCL_OK, "");
  anycl_model* loaded = NULL;
  CHECK_STATUS(anycl_model_load(path, &loaded), ANYCL_OK, "");
  float again[8];
  CHECK_STATUS(anycl_predict(loaded, rt, x, 4, again, 8), ANYCL_OK, "");
  CHECK(memcmp(probs, again, sizeof again) == 0);
  char bad_path[1024];
  snprintf(bad_path, sizeof bad_path, "%s/no-such-folder/model.anycl", folder);
  CHECK_STATUS(anycl_model_save(model, bad_path), ANYCL_ERROR_IO, "no-such-folder");
  anycl_model* missing = (anycl_model*)1;
  CHECK_STATUS(anycl_model_load(bad_path, &missing), ANYCL_ERROR_DATA, "no-such-folder");
  CHECK(missing == NULL);

  /* ONNX: written where the build has it, a clear ANYCL_ERROR_UNSUPPORTED otherwise */
  snprintf(path, sizeof path, "%s/model.onnx", folder);
  const anycl_status onnx = anycl_model_export_onnx(model, path);
  CHECK(onnx == ANYCL_OK ||
        (onnx == ANYCL_ERROR_UNSUPPORTED && strstr(anycl_last_error(), "ANYCL_WITH_ONNX")));
  if (onnx == ANYCL_OK) {
    FILE* f = fopen(path, "rb");
    CHECK(f != NULL);
    if (f) {
      CHECK(fseek(f, 0, SEEK_END) == 0 && ftell(f) > 100);
      fclose(f);
    }
  }

  /* callbacks stop after the current step; the model keeps the weights reached */
  to.epochs = 5;
  to.on_epoch = stop_at_epoch_two;
  CHECK_STATUS(anycl_train(loaded, rt, data, NULL, &to, history, 40, &done, &stopped), ANYCL_OK, "");
  CHECK(done == 2 && stopped == 1);
  int calls = 0;
  to.on_epoch = NULL;
  to.on_progress = count_progress;
  to.progress_interval_s = 1e-9;
  to.user = &calls;
  to.validation_split = 0.25;
  snprintf(path, sizeof path, "%s/checkpoints", folder);
  to.checkpoint_dir = path;
  CHECK_STATUS(anycl_train(loaded, rt, data, NULL, &to, history, 40, &done, &stopped), ANYCL_OK, "");
  CHECK(calls >= 1 && stopped == 1 && done == 0);
  snprintf(path, sizeof path, "%s/checkpoints/checkpoint.anyclckpt", folder);
  FILE* ckpt = fopen(path, "rb");
  CHECK(ckpt != NULL);
  if (ckpt) fclose(ckpt);

  /* bad training calls */
  to.on_progress = NULL;
  to.checkpoint_dir = NULL;
  to.validation_split = 1.5;
  CHECK_STATUS(anycl_train(loaded, rt, data, NULL, &to, NULL, 0, NULL, NULL), ANYCL_ERROR_INVALID_ARGUMENT,
               "validation_split");
  to.validation_split = 0;
  to.optimizer = "adagrad";
  CHECK_STATUS(anycl_train(loaded, rt, data, NULL, &to, NULL, 0, NULL, NULL), ANYCL_ERROR_INVALID_ARGUMENT,
               "adagrad");
  to.optimizer = "adam";
  to.struct_size = 8;
  CHECK_STATUS(anycl_train(loaded, rt, data, NULL, &to, NULL, 0, NULL, NULL), ANYCL_ERROR_INVALID_ARGUMENT,
               "anycl_train_options_init");
  anycl_model_destroy(loaded);
  anycl_model_destroy(model);
  anycl_dataset_destroy(data);
}

static void regression(anycl_runtime* rt) {
  static float x[kSamples], t[kSamples];
  for (size_t i = 0; i < kSamples; ++i) {
    x[i] = (float)i / kSamples * 2.f - 1.f;
    t[i] = 2.f * x[i] + 1.f;
  }
  anycl_dataset* data = NULL;
  CHECK_STATUS(anycl_dataset_create_targets(x, kSamples, 1, t, 1, &data), ANYCL_OK, "");
  anycl_model* model = flat_model("none", "mse", 1, 1);
  anycl_train_options to = train_options(60, 32, "adam");
  to.lr = 0.05f;
  anycl_epoch last[60];
  CHECK_STATUS(anycl_train(model, rt, data, NULL, &to, last, 60, NULL, NULL), ANYCL_OK, "");
  CHECK(last[59].loss < 1e-3);
  const float probe[2] = {0.25f, -0.5f};
  float y[2];
  CHECK_STATUS(anycl_predict(model, rt, probe, 2, y, 2), ANYCL_OK, "");
  CHECK(fabsf(y[0] - 1.5f) < 0.05f && fabsf(y[1] - 0.f) < 0.05f);
  anycl_model_destroy(model);
  anycl_dataset_destroy(data);
}

static void cnn_and_bad_models(anycl_runtime* rt) {
  enum { n = 64 };
  static uint8_t images[n * 8 * 8];
  static int32_t labels[n];
  for (size_t i = 0; i < n; ++i) { /* class 1: a bright left half */
    labels[i] = (int32_t)(i % 2);
    for (size_t p = 0; p < 64; ++p)
      images[i * 64 + p] = (uint8_t)((labels[i] && p % 8 < 4) ? 200 : (p * 3 + i) % 50);
  }
  anycl_dataset* data = NULL;
  CHECK_STATUS(anycl_dataset_create_classes_u8(images, n, 64, labels, 2, &data), ANYCL_OK, "");
  anycl_model_options mo;
  anycl_model_options_init(&mo);
  mo.layers = "conv4x3,pool2,flatten,16";
  mo.dropout = 0.f;
  mo.input_shape[0] = 1;
  mo.input_shape[1] = 8;
  mo.input_shape[2] = 8;
  mo.outputs = 2;
  anycl_model* model = NULL;
  CHECK_STATUS(anycl_model_create(&mo, &model), ANYCL_OK, "");
  size_t length = 0;
  char summary[4096];
  CHECK_STATUS(anycl_model_summary(model, summary, sizeof summary, &length), ANYCL_OK, "");
  CHECK(strstr(summary, "Conv2D") != NULL);
  anycl_train_options to;
  anycl_train_options_init(&to);
  to.epochs = 10;
  to.batch = 16;
  to.optimizer = "adam";
  anycl_epoch last[10];
  CHECK_STATUS(anycl_train(model, rt, data, NULL, &to, last, 10, NULL, NULL), ANYCL_OK, "");
  CHECK(last[9].accuracy > 0.9);

  /* BatchNormalization through the --layers token: Keras' counts, four arrays per layer, trains */
  mo.layers = "conv4x3,bn,pool2,flatten,16,bn0.9";
  anycl_model* bn = NULL;
  CHECK_STATUS(anycl_model_create(&mo, &bn), ANYCL_OK, "");
  CHECK_STATUS(anycl_model_summary(bn, summary, sizeof summary, &length), ANYCL_OK, "");
  CHECK(strstr(summary, "BatchNormalization") != NULL);
  CHECK(strstr(summary, "Non-trainable params: 40\n") != NULL); /* 2·4 + 2·16 moving statistics */
  size_t arrays = 0;
  CHECK_STATUS(anycl_model_weight_count(bn, &arrays), ANYCL_OK, "");
  CHECK(arrays == 2 + 4 + 2 + 4 + 2);
  CHECK_STATUS(anycl_train(bn, rt, data, NULL, &to, last, 10, NULL, NULL), ANYCL_OK, "");
  CHECK(last[9].accuracy > 0.9);
  anycl_model_destroy(bn);

  /* a data set of 3 classes does not fit a 2-output model */
  static int32_t three[n];
  for (size_t i = 0; i < n; ++i) three[i] = (int32_t)(i % 3);
  anycl_dataset* wrong = NULL;
  CHECK_STATUS(anycl_dataset_create_classes_u8(images, n, 64, three, 3, &wrong), ANYCL_OK, "");
  CHECK(anycl_train(model, rt, wrong, NULL, &to, NULL, 0, NULL, NULL) == ANYCL_ERROR_INVALID_ARGUMENT);
  CHECK(strlen(anycl_last_error()) > 0);
  anycl_dataset_destroy(wrong);

  mo.layers = "conv4x3,bogus";
  anycl_model* bad = (anycl_model*)1;
  CHECK_STATUS(anycl_model_create(&mo, &bad), ANYCL_ERROR_INVALID_ARGUMENT, "bogus");
  CHECK(bad == NULL);
  mo.layers = "pool16";
  CHECK_STATUS(anycl_model_create(&mo, &bad), ANYCL_ERROR_INVALID_ARGUMENT, "options.layers");
  mo.layers = "16";
  mo.loss = "hinge";
  CHECK_STATUS(anycl_model_create(&mo, &bad), ANYCL_ERROR_INVALID_ARGUMENT, "hinge");
  mo.loss = NULL;
  mo.outputs = 0;
  CHECK_STATUS(anycl_model_create(&mo, &bad), ANYCL_ERROR_INVALID_ARGUMENT, "outputs is 0");
  anycl_model_destroy(model);
  anycl_dataset_destroy(data);
}

/* anycl_train_options and anycl_epoch as API version 1's header declared them: such a caller trains at
 * a constant rate and receives version 1's records in `history`. */
typedef struct train_options_v1 {
  size_t struct_size, epochs, batch;
  const char* optimizer;
  float lr;
  uint64_t seed;
  double validation_split;
  const char* checkpoint_dir;
  double progress_interval_s;
  anycl_progress_callback on_progress;
  anycl_epoch_callback on_epoch;
  void* user;
} train_options_v1;
typedef struct epoch_v1 {
  size_t epoch;
  double loss, accuracy;
  int has_validation;
  double val_loss, val_accuracy, seconds;
} epoch_v1;

static void schedules(anycl_runtime* rt) {
  static float x[2 * 64];
  static int32_t y[64];
  circle_data(x, y, 64);
  anycl_dataset* data = NULL;
  CHECK_STATUS(anycl_dataset_create_classes(x, 64, 2, y, 2, &data), ANYCL_OK, "");
  anycl_model* model = flat_model("8", NULL, 2, 2);

  /* Exponential decay per step: 64 samples / 16 = 4 steps an epoch, the last of epoch e is step 4e - 1. */
  anycl_train_options to = train_options(3, 16, "sgd");
  to.lr = 0.1f;
  to.lr_schedule = "exponential";
  to.decay_steps = 4;
  to.decay_rate = 0.5;
  anycl_epoch history[3];
  CHECK_STATUS(anycl_train(model, rt, data, NULL, &to, history, 3, NULL, NULL), ANYCL_OK, "");
  for (int e = 0; e < 3; ++e)
    CHECK(fabs(history[e].learning_rate - 0.1 * pow(0.5, (4.0 * e + 3) / 4)) < 1e-8);

  /* Step decay: the values are the rates. */
  const uint64_t boundaries[1] = {5};
  const float values[2] = {0.05f, 0.01f};
  to.lr_schedule = "step";
  to.boundaries = boundaries;
  to.values = values;
  to.boundary_count = 1;
  CHECK_STATUS(anycl_train(model, rt, data, NULL, &to, history, 3, NULL, NULL), ANYCL_OK, "");
  CHECK(history[0].learning_rate == 0.05f && history[1].learning_rate == 0.01f);

  /* ReduceLROnPlateau on the training loss (no validation data): min_delta 10 means no improvement. */
  to.lr_schedule = "plateau";
  to.patience = 1;
  to.min_delta = 10;
  to.factor = 0.5;
  CHECK_STATUS(anycl_train(model, rt, data, NULL, &to, history, 3, NULL, NULL), ANYCL_OK, "");
  CHECK(history[0].learning_rate == 0.1f && history[1].learning_rate == 0.1f &&
        history[2].learning_rate == 0.05f);

  /* CosineDecay's warm-up (API version 4) with lr unset (0): the warm-up starts at 0, as Keras'
   * CosineDecay(0.0, 4, alpha=0.25, warmup_target=0.2, warmup_steps=6): steps 0-5 rise, 6-10 decay. */
  const double pi = 3.14159265358979323846; /* M_PI is not standard C */
  anycl_train_options warm = train_options(3, 16, "sgd");
  warm.lr_schedule = "cosine";
  warm.decay_steps = 4;
  warm.alpha = 0.25;
  warm.warmup_target = 0.2;
  warm.warmup_steps = 6;
  CHECK_STATUS(anycl_train(model, rt, data, NULL, &warm, history, 3, NULL, NULL), ANYCL_OK, "");
  CHECK(fabs(history[0].learning_rate - 0.2 * 3 / 6) < 1e-8); /* step 3: halfway up from 0 */
  CHECK(fabs(history[1].learning_rate - 0.2 * (0.75 * 0.5 * (1 + cos(pi / 4)) + 0.25)) < 1e-8); /* step 7 */
  CHECK(history[2].learning_rate == 0.05f); /* step 11: past the decay, alpha * warmup_target */

  /* A caller of API version 1: its struct_size is accepted and `history` holds version 1's records
   * (the byte after the last one is untouched). */
  train_options_v1 old;
  memcpy(&old, &to, sizeof old);
  old.struct_size = sizeof old;
  unsigned char records[3 * sizeof(epoch_v1) + 1];
  memset(records, 0xAB, sizeof records);
  size_t done = 0;
  CHECK_STATUS(anycl_train(model, rt, data, NULL, (const anycl_train_options*)&old, (anycl_epoch*)records, 3,
                           &done, NULL),
               ANYCL_OK, "");
  CHECK(done == 3);
  epoch_v1 third;
  memcpy(&third, records + 2 * sizeof(epoch_v1), sizeof third);
  CHECK(third.epoch == 3 && third.loss > 0);
  CHECK(records[3 * sizeof(epoch_v1)] == 0xAB);
  anycl_model_destroy(model);
  anycl_dataset_destroy(data);
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: c_api_test SCRATCH_FOLDER\n");
    return 2;
  }
  if (anycl_check_version(ANYCL_API_VERSION) != ANYCL_OK) {
    fprintf(stderr, "%s\n", anycl_last_error());
    return 1;
  }
  anycl_runtime* rt = NULL;
  const anycl_status s = anycl_runtime_create(NULL, &rt);
  if (s == ANYCL_ERROR_DEVICE) return skip_or_fail(anycl_last_error());
  CHECK(s == ANYCL_OK);
  if (s != ANYCL_OK) return 1;
  classifier(rt, argv[1]);
  regression(rt);
  cnn_and_bad_models(rt);
  schedules(rt);
  anycl_runtime_destroy(rt);
  if (c_api_failures) fprintf(stderr, "%d check(s) failed\n", c_api_failures);
  return c_api_failures ? 1 : 0;
}
