/* The C door's contract, one table of hostile calls (issue 43): each row is a call a C or C# program
 * could make, the status it must return and words its message must hold; every message must be valid
 * UTF-8 without control bytes. Rows that need a device run when one is found (exit 77 otherwise,
 * outside CI). argv[1]: a scratch folder. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "c_api_check.h"

/* What a row's call returns when this build or platform cannot run it (counted, not failed). */
#define ROW_SKIPPED ((anycl_status)-1)
#ifdef _WIN32 /* the environment is UTF-16 there: the byte 0xFF arrives re-encoded as valid text */
#define BAD_ENV_SPEC_WORDS "the device spec taken from $ANYCL_DEVICE"
#else
#define BAD_ENV_SPEC_WORDS "'nosuch-\\xFF', the device spec taken from $ANYCL_DEVICE"
#endif

static const char* scratch = ".";
static anycl_runtime* rt = NULL;
static char path_buffer[6000];

static const char* scratch_file(const char* name) {
  snprintf(path_buffer, sizeof path_buffer, "%s/%s", scratch, name);
  return path_buffer;
}

static anycl_model_options options(void) {
  anycl_model_options o;
  anycl_model_options_init(&o);
  o.layers = "4";
  o.dropout = 0;
  o.input_shape[0] = 3;
  o.outputs = 2;
  return o;
}

static anycl_status create(anycl_model_options o) {
  anycl_model* m = NULL;
  const anycl_status s = anycl_model_create(&o, &m);
  anycl_model_destroy(m);
  return s;
}

/* A 3-4-2 model whose weights are set (no device needed): every array filled with `value`. */
static anycl_model* model_with_weights(float value) {
  anycl_model_options o = options();
  anycl_model* m = NULL;
  if (anycl_model_create(&o, &m) != ANYCL_OK) return NULL;
  size_t arrays = 0;
  anycl_model_weight_count(m, &arrays);
  for (size_t i = 0; i < arrays; ++i) {
    size_t ndim = 0, shape[4] = {0, 0, 0, 0}, n = 1;
    anycl_model_weight_shape(m, i, &ndim, shape);
    for (size_t d = 0; d < ndim; ++d) n *= shape[d];
    float values[64];
    for (size_t k = 0; k < n && k < 64; ++k) values[k] = value;
    anycl_model_set_weights(m, i, values, n);
  }
  return m;
}

static anycl_status save_to(const char* path) {
  anycl_model* m = model_with_weights(0.5f);
  const anycl_status s = anycl_model_save(m, path);
  anycl_model_destroy(m);
  return s;
}

/* --- model options ------------------------------------------------------------------------------- */
static anycl_status struct_size_deadbeef(void) {
  anycl_model_options o = options();
  o.struct_size = 0xdeadbeef;
  return create(o);
}
static anycl_status struct_size_max(void) {
  anycl_model_options o = options();
  o.struct_size = SIZE_MAX;
  return create(o);
}
static anycl_status struct_size_small(void) {
  anycl_model_options o = options();
  o.struct_size = 8;
  return create(o);
}
static anycl_status dropout_nan(void) {
  anycl_model_options o = options();
  o.dropout = NAN;
  return create(o);
}
static anycl_status input_overflows_weights(void) {
  anycl_model_options o = options();
  o.input_shape[0] = ((size_t)1 << 61) + 1;
  return create(o);
}
static anycl_status input_shape_overflows(void) {
  anycl_model_options o = options();
  o.layers = "conv2x3,flatten,4";
  o.input_shape[0] = o.input_shape[1] = o.input_shape[2] = (size_t)1 << 30;
  return create(o);
}
static anycl_status one_class(void) {
  anycl_model_options o = options();
  o.outputs = 1;
  return create(o);
}
static anycl_status a_billion_outputs(void) {
  anycl_model_options o = options();
  o.outputs = 1000000000;
  return create(o);
}
static anycl_status layers_not_utf8(void) {
  anycl_model_options o = options();
  o.layers = "4,\xff\xfe\x01";
  return create(o);
}
static anycl_status pool_with_activation(void) {
  anycl_model_options o = options();
  o.layers = "4:tanh,pool2:relu";
  return create(o);
}
static anycl_status batchnorm_with_softmax(void) {
  anycl_model_options o = options();
  o.layers = "4:linear,bn:softmax";
  return create(o);
}
static anycl_status batchnorm_with_relu(void) {
  anycl_model_options o = options();
  o.layers = "4:linear,bn0.9:relu";
  return create(o);
}
static anycl_status unknown_loss(void) {
  anycl_model_options o = options();
  o.loss = "hinge";
  return create(o);
}

/* --- data sets ----------------------------------------------------------------------------------- */
static float x12[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
static anycl_status dataset_one_class(void) {
  const int32_t labels[4] = {0, 0, 0, 0};
  anycl_dataset* d = NULL;
  const anycl_status s = anycl_dataset_create_classes(x12, 4, 3, labels, 1, &d);
  anycl_dataset_destroy(d);
  return s;
}
static anycl_status dataset_negative_label(void) {
  const int32_t labels[4] = {0, 1, 0, -1};
  anycl_dataset* d = NULL;
  const anycl_status s = anycl_dataset_create_classes(x12, 4, 3, labels, 2, &d);
  anycl_dataset_destroy(d);
  return s;
}
static anycl_status dataset_infinite_x(void) {
  float x[12];
  memcpy(x, x12, sizeof x);
  x[3] = INFINITY;
  const int32_t labels[4] = {0, 1, 0, 1};
  anycl_dataset* d = NULL;
  const anycl_status s = anycl_dataset_create_classes(x, 4, 3, labels, 2, &d);
  anycl_dataset_destroy(d);
  return s;
}
static anycl_status dataset_nan_target(void) {
  float t[4] = {0, 1, 2, NAN};
  anycl_dataset* d = NULL;
  const anycl_status s = anycl_dataset_create_targets(x12, 4, 3, t, 1, &d);
  anycl_dataset_destroy(d);
  return s;
}
static anycl_status dataset_zero_outputs(void) {
  float t[4] = {0, 1, 2, 3};
  anycl_dataset* d = NULL;
  const anycl_status s = anycl_dataset_create_targets(x12, 4, 3, t, 0, &d);
  anycl_dataset_destroy(d);
  return s;
}

/* --- weights ------------------------------------------------------------------------------------- */
static anycl_status weight_index_past_end(void) {
  anycl_model* m = model_with_weights(0.f);
  float out[8];
  const anycl_status s = anycl_model_get_weights(m, 99, out, 8);
  anycl_model_destroy(m);
  return s;
}
static anycl_status weight_nan(void) {
  anycl_model* m = model_with_weights(0.f);
  const float values[2] = {1.f, NAN};
  const anycl_status s = anycl_model_set_weights(m, 3, values, 2);
  anycl_model_destroy(m);
  return s;
}
static anycl_status weight_count_null_out(void) {
  anycl_model* m = model_with_weights(0.f);
  const anycl_status s = anycl_model_weight_count(m, NULL);
  anycl_model_destroy(m);
  return s;
}

/* --- files --------------------------------------------------------------------------------------- */
static anycl_status save_onto_a_folder(void) { return save_to(scratch); }
static anycl_status save_into_a_missing_folder(void) {
  return save_to(scratch_file("no-such-folder/m.anycl"));
}
static anycl_status save_a_5000_character_path(void) {
  char name[5001];
  memset(name, 'a', 5000);
  name[5000] = '\0';
  return save_to(scratch_file(name));
}
static anycl_status save_under_a_file(void) {
  if (save_to(scratch_file("plain.anycl")) != ANYCL_OK) return ANYCL_ERROR_INTERNAL;
  return save_to(scratch_file("plain.anycl/inside.anycl"));
}
/* A model file whose architecture holds a NUL: the message goes on past it, escaped. */
static anycl_status load_a_nul_in_the_architecture(void) {
  static const char text[] = "input 3\nclasses 2\nden\0se 2 linear glorot_uniform\n";
  const uint32_t length = sizeof text - 1;
  unsigned char bytes[128];
  size_t n = 0;
  memcpy(bytes, "ANYCLMDL", 8);
  n = 8;
  const uint32_t version = 1;
  for (int i = 0; i < 4; ++i) bytes[n++] = (unsigned char)(version >> (8 * i));
  for (int i = 0; i < 4; ++i) bytes[n++] = (unsigned char)(length >> (8 * i));
  memcpy(bytes + n, text, length);
  n += length;
  for (int i = 0; i < 8; ++i) bytes[n++] = 0; /* no weights */
  uint64_t h = 1469598103934665603ull;        /* the format's FNV-1a basis (docs/model-format.md) */
  for (size_t i = 0; i < n; ++i) h = (h ^ bytes[i]) * 1099511628211ull;
  for (int i = 0; i < 8; ++i) bytes[n++] = (unsigned char)(h >> (8 * i));
  FILE* f = fopen(scratch_file("with-nul-byte.anycl"), "wb");
  if (!f || fwrite(bytes, 1, n, f) != n) return ANYCL_ERROR_INTERNAL;
  fclose(f);
  anycl_model* m = NULL;
  const anycl_status s = anycl_model_load(scratch_file("with-nul-byte.anycl"), &m);
  anycl_model_destroy(m);
  return s;
}

/* --- NULL out-pointers: refused alike in every call, naming the call and the parameter ------------- */
static anycl_model* g_model = NULL;  /* a 3-4-2 model with weights (main) */
static anycl_dataset* g_data = NULL; /* 4 samples of 3 features, 2 classes (main) */
static char g_text[256];
static size_t g_size, g_shape[4];
static double g_figure;
static anycl_status null_runtime_out(void) { return anycl_runtime_create(NULL, NULL); }
static anycl_status null_devices_length(void) { return anycl_devices_json(g_text, sizeof g_text, NULL); }
static anycl_status null_model_out(void) {
  anycl_model_options o = options();
  return anycl_model_create(&o, NULL);
}
static anycl_status null_load_out(void) { return anycl_model_load(scratch_file("plain.anycl"), NULL); }
static anycl_status null_input_size(void) { return anycl_model_input_size(g_model, NULL); }
static anycl_status null_output_size(void) { return anycl_model_output_size(g_model, NULL); }
static anycl_status null_input_shape(void) { return anycl_model_input_shape(g_model, NULL); }
static anycl_status null_has_weights(void) { return anycl_model_has_weights(g_model, NULL); }
static anycl_status null_loss_length(void) { return anycl_model_loss(g_model, g_text, sizeof g_text, NULL); }
static anycl_status null_summary_length(void) {
  return anycl_model_summary(g_model, g_text, sizeof g_text, NULL);
}
static anycl_status null_weight_ndim(void) { return anycl_model_weight_shape(g_model, 0, NULL, g_shape); }
static anycl_status null_weight_shape(void) { return anycl_model_weight_shape(g_model, 0, &g_size, NULL); }
static anycl_status null_weights_out(void) { return anycl_model_get_weights(g_model, 0, NULL, 12); }
static anycl_status null_dataset_out(void) {
  const int32_t labels[4] = {0, 1, 0, 1};
  return anycl_dataset_create_classes(x12, 4, 3, labels, 2, NULL);
}
static anycl_status null_dataset_count(void) { return anycl_dataset_count(g_data, NULL); }
static anycl_status null_evaluate_metric(void) {
  return anycl_evaluate_metric(g_model, rt, g_data, &g_figure, NULL);
}
static anycl_status null_predictions(void) { return anycl_predict(g_model, rt, x12, 1, NULL, 2); }
static anycl_status null_history_with_capacity(void) {
  anycl_train_options t = train_options(1, 2, NULL);
  return anycl_train(g_model, rt, g_data, NULL, &t, NULL, 5, NULL, NULL);
}

/* --- files (2) ----------------------------------------------------------------------------------- */
/* ONNX export onto a folder: ANYCL_ERROR_IO as the model file's (skipped in a build without ONNX). */
static anycl_status export_onto_a_folder(void) {
  if (anycl_model_export_onnx(g_model, scratch_file("fine.onnx")) == ANYCL_ERROR_UNSUPPORTED)
    return ROW_SKIPPED;
  return anycl_model_export_onnx(g_model, scratch);
}
static anycl_status export_into_a_missing_folder(void) {
  if (anycl_model_export_onnx(g_model, scratch_file("fine.onnx")) == ANYCL_ERROR_UNSUPPORTED)
    return ROW_SKIPPED;
  return anycl_model_export_onnx(g_model, scratch_file("no-such-folder/m.onnx"));
}
#ifndef _WIN32
static anycl_status save_onto_dev_full(void) { return save_to("/dev/full"); }
static anycl_status save_a_path_not_utf8(void) { return save_to(scratch_file("no-such-\xff/m.anycl")); }
static anycl_status load_a_path_not_utf8(void) {
  anycl_model* m = NULL;
  const anycl_status s = anycl_model_load(scratch_file("missing-\xfe\xff.anycl"), &m);
  anycl_model_destroy(m);
  return s;
}
#endif

/* --- data the model cannot train on: said in the C API's words, never C++'s ---------------------- */
static anycl_status train_classifier_on_targets(void) {
  float t[4] = {0, 1, 2, 3};
  anycl_dataset* d = NULL;
  anycl_dataset_create_targets(x12, 4, 3, t, 1, &d);
  anycl_train_options o = train_options(1, 2, NULL);
  const anycl_status s = anycl_train(g_model, rt, d, NULL, &o, NULL, 0, NULL, NULL);
  anycl_dataset_destroy(d);
  return s;
}
static anycl_status train_regressor_on_labels(void) {
  anycl_model_options mo = options();
  mo.loss = "mse";
  anycl_model* m = NULL;
  anycl_model_create(&mo, &m);
  anycl_train_options o = train_options(1, 2, NULL);
  const anycl_status s = anycl_train(m, rt, g_data, NULL, &o, NULL, 0, NULL, NULL);
  anycl_model_destroy(m);
  return s;
}
static anycl_status train_on_other_features(void) {
  const int32_t labels[3] = {0, 1, 0};
  anycl_dataset* d = NULL;
  anycl_dataset_create_classes(x12, 3, 4, labels, 2, &d);
  anycl_train_options o = train_options(1, 2, NULL);
  const anycl_status s = anycl_train(g_model, rt, d, NULL, &o, NULL, 0, NULL, NULL);
  anycl_dataset_destroy(d);
  return s;
}
static anycl_status train_unknown_optimizer(void) {
  anycl_train_options o = train_options(1, 2, "adagrad");
  return anycl_train(g_model, rt, g_data, NULL, &o, NULL, 0, NULL, NULL);
}

/* --- devices ------------------------------------------------------------------------------------ */
static void set_device_env(const char* value) {
#ifdef _WIN32
  _putenv_s("ANYCL_DEVICE", value ? value : "");
#else
  if (value)
    setenv("ANYCL_DEVICE", value, 1);
  else
    unsetenv("ANYCL_DEVICE");
#endif
}
/* A spec from $ANYCL_DEVICE (with bytes that are not UTF-8) that matches no device: the message says
 * where it came from, quotes it escaped, and says to set or unset the variable. */
static anycl_status runtime_from_a_bad_env_spec(void) {
  const char* old = getenv("ANYCL_DEVICE");
  static char saved[512];
  if (old) snprintf(saved, sizeof saved, "%s", old);
  set_device_env("nosuch-\xff");
  anycl_runtime* r = NULL;
  const anycl_status s = anycl_runtime_create(NULL, &r);
  anycl_runtime_destroy(r);
  set_device_env(old ? saved : NULL);
  return s;
}

/* --- training and evaluation (need a device) ----------------------------------------------------- */
static anycl_status train_with(anycl_train_options t) {
  anycl_model* m = model_with_weights(0.1f);
  const int32_t labels[4] = {0, 1, 0, 1};
  anycl_dataset* d = NULL;
  anycl_dataset_create_classes(x12, 4, 3, labels, 2, &d);
  const anycl_status s = anycl_train(m, rt, d, NULL, &t, NULL, 0, NULL, NULL);
  anycl_dataset_destroy(d);
  anycl_model_destroy(m);
  return s;
}
static anycl_status train_struct_size_huge(void) {
  anycl_train_options t = train_options(1, 2, NULL);
  t.struct_size = SIZE_MAX;
  return train_with(t);
}
static anycl_status train_validation_split_nan(void) {
  anycl_train_options t = train_options(1, 2, NULL);
  t.validation_split = NAN;
  return train_with(t);
}
static anycl_status train_lr_infinite(void) {
  anycl_train_options t = train_options(1, 2, NULL);
  t.lr = INFINITY;
  return train_with(t);
}
/* Learning-rate schedules (API version 2's fields). */
static anycl_status train_schedule(const char* kind, double decay_steps, double decay_rate, double alpha,
                                   double factor, double min_lr) {
  anycl_train_options t = train_options(1, 2, NULL);
  t.lr_schedule = kind;
  t.decay_steps = decay_steps;
  t.decay_rate = decay_rate;
  t.alpha = alpha;
  t.factor = factor;
  t.min_lr = min_lr;
  return train_with(t);
}
static anycl_status schedule_unknown(void) { return train_schedule("linear", 10, 0.5, 0, 0.1, 0); }
static anycl_status schedule_decay_rate_nan(void) {
  return train_schedule("exponential", 10, NAN, 0, 0.1, 0);
}
static anycl_status schedule_decay_rate_above_1(void) {
  return train_schedule("exponential", 10, 1.5, 0, 0.1, 0);
}
static anycl_status schedule_decay_steps_0(void) { return train_schedule("exponential", 0, 0.5, 0, 0.1, 0); }
static anycl_status schedule_decay_steps_inf(void) {
  return train_schedule("cosine", INFINITY, 0, 0, 0.1, 0);
}
static anycl_status schedule_alpha_negative(void) { return train_schedule("cosine", 10, 0, -0.5, 0.1, 0); }
static anycl_status schedule_factor_1(void) { return train_schedule("plateau", 0, 0, 0, 1, 0); }
static anycl_status schedule_min_lr_minus_inf(void) {
  return train_schedule("plateau", 0, 0, 0, 0.1, -INFINITY);
}
static anycl_status schedule_step_null_boundaries(void) {
  anycl_train_options t = train_options(1, 2, NULL);
  const float values[3] = {0.1f, 0.01f, 0.001f};
  t.lr_schedule = "step";
  t.boundary_count = 2;
  t.values = values;
  return train_with(t);
}
static anycl_status schedule_step_value_nan(void) {
  anycl_train_options t = train_options(1, 2, NULL);
  const uint64_t boundaries[2] = {10, 20};
  const float values[3] = {0.1f, NAN, 0.001f};
  t.lr_schedule = "step";
  t.boundaries = boundaries;
  t.boundary_count = 2;
  t.values = values;
  return train_with(t);
}
static anycl_status schedule_step_decreasing(void) {
  anycl_train_options t = train_options(1, 2, NULL);
  const uint64_t boundaries[2] = {20, 10};
  const float values[3] = {0.1f, 0.01f, 0.001f};
  t.lr_schedule = "step";
  t.boundaries = boundaries;
  t.boundary_count = 2;
  t.values = values;
  return train_with(t);
}
static anycl_status schedule_step_no_boundaries(void) {
  anycl_train_options t = train_options(1, 2, NULL);
  t.lr_schedule = "step";
  return train_with(t);
}
static anycl_status schedule_plateau_val_loss_without_validation(void) {
  anycl_train_options t = train_options(1, 2, NULL);
  t.lr_schedule = "plateau";
  t.monitor = "val_loss";
  return train_with(t);
}
static anycl_status schedule_plateau_monitor_accuracy(void) {
  anycl_train_options t = train_options(1, 2, NULL);
  t.lr_schedule = "plateau";
  t.monitor = "accuracy";
  return train_with(t);
}
/* A caller built against API version 1's header: its smaller struct_size still trains; a size that
 * is no version's is refused. */
static anycl_status train_struct_size_version_1(void) {
  anycl_train_options t = train_options(1, 2, NULL);
  t.struct_size = offsetof(anycl_train_options, lr_schedule);
  t.lr_schedule = "no such schedule"; /* beyond version 1's fields: never read */
  const anycl_status s = train_with(t);
  /* It trains: a build whose GEMM library is absent at run time (Windows under Wine) cannot. */
  if (s == ANYCL_ERROR_UNSUPPORTED && strstr(anycl_last_error(), "CLBlast")) return ROW_SKIPPED;
  return s;
}
static anycl_status train_struct_size_between_versions(void) {
  anycl_train_options t = train_options(1, 2, NULL);
  t.struct_size = offsetof(anycl_train_options, lr_schedule) + 8;
  return train_with(t);
}
static anycl_status train_checkpoint_under_a_file(void) {
  if (save_to(scratch_file("plain2.anycl")) != ANYCL_OK) return ANYCL_ERROR_INTERNAL;
  anycl_train_options t = train_options(1, 2, NULL);
  static char folder[6000];
  snprintf(folder, sizeof folder, "%s/plain2.anycl/checkpoints", scratch);
  t.checkpoint_dir = folder;
  return train_with(t);
}
/* options.resume_from (API version 3): a missing checkpoint; another model's; a version-2 caller's
 * struct_size, whose resume_from field it does not have, trains from the start. */
static anycl_status resume_from_missing(void) {
  anycl_train_options t = train_options(1, 2, NULL);
  t.resume_from = scratch_file("no-such-run");
  return train_with(t);
}
static anycl_status resume_from_another_model(void) {
  static char folder[6000];
  snprintf(folder, sizeof folder, "%s/run-of-4", scratch);
  anycl_train_options t = train_options(1, 2, NULL);
  t.checkpoint_dir = folder;
  if (train_with(t) != ANYCL_OK) return ROW_SKIPPED; /* e.g. no CLBlast at run time (Wine) */
  anycl_model_options o = options();
  o.layers = "6";
  anycl_model* m = NULL;
  if (anycl_model_create(&o, &m) != ANYCL_OK) return ANYCL_ERROR_INTERNAL;
  const int32_t labels[4] = {0, 1, 0, 1};
  anycl_dataset* d = NULL;
  anycl_dataset_create_classes(x12, 4, 3, labels, 2, &d);
  t.checkpoint_dir = NULL;
  t.resume_from = folder;
  const anycl_status s = anycl_train(m, rt, d, NULL, &t, NULL, 0, NULL, NULL);
  anycl_dataset_destroy(d);
  anycl_model_destroy(m);
  return s;
}
static anycl_status train_struct_size_version_2(void) {
  anycl_train_options t = train_options(1, 2, NULL);
  t.struct_size = offsetof(anycl_train_options, resume_from);
  t.resume_from = "no such checkpoint"; /* beyond version 2's fields: never read */
  const anycl_status s = train_with(t);
  if (s == ANYCL_ERROR_UNSUPPORTED && strstr(anycl_last_error(), "CLBlast")) return ROW_SKIPPED;
  return s;
}
/* CosineDecay's warm-up (API version 4): bad values, a warm-up on another schedule or on none, and a
 * version-3 caller's struct_size, whose warm-up fields it does not have, training without one. */
static anycl_status train_warmup(const char* kind, double warmup_target, double warmup_steps) {
  anycl_train_options t = train_options(1, 2, NULL);
  t.lr_schedule = kind;
  t.decay_steps = 10;
  t.decay_rate = 0.5;
  t.warmup_target = warmup_target;
  t.warmup_steps = warmup_steps;
  return train_with(t);
}
static anycl_status warmup_target_nan(void) { return train_warmup("cosine", NAN, 5); }
static anycl_status warmup_target_negative(void) { return train_warmup("cosine", -0.1, 5); }
static anycl_status warmup_steps_fraction(void) { return train_warmup("cosine", 0.1, 2.5); }
static anycl_status warmup_steps_negative(void) { return train_warmup("cosine", 0.1, -3); }
static anycl_status warmup_on_exponential(void) { return train_warmup("exponential", 0.1, 5); }
static anycl_status warmup_without_schedule(void) { return train_warmup(NULL, 0.1, 5); }
static anycl_status train_struct_size_version_3(void) {
  anycl_train_options t = train_options(1, 2, NULL);
  t.struct_size = offsetof(anycl_train_options, warmup_target);
  t.warmup_target = NAN; /* beyond version 3's fields: never read */
  t.warmup_steps = -1;
  const anycl_status s = train_with(t);
  if (s == ANYCL_ERROR_UNSUPPORTED && strstr(anycl_last_error(), "CLBlast")) return ROW_SKIPPED;
  return s;
}
static anycl_status evaluate_null_out(void) {
  anycl_model* m = model_with_weights(0.1f);
  const int32_t labels[4] = {0, 1, 0, 1};
  anycl_dataset* d = NULL;
  anycl_dataset_create_classes(x12, 4, 3, labels, 2, &d);
  double accuracy = 0;
  const anycl_status s = anycl_evaluate(m, rt, d, NULL, &accuracy);
  anycl_dataset_destroy(d);
  anycl_model_destroy(m);
  return s;
}

typedef struct Row {
  const char* name;
  anycl_status (*call)(void);
  anycl_status status;
  const char* words[3];
  int needs_device;
} Row;

static const Row rows[] = {
    {"struct_size 0xdeadbeef",
     struct_size_deadbeef,
     ANYCL_ERROR_VERSION,
     {"anycl_model_create", "3735928559", "newer anycl.h"},
     0},
    {"struct_size SIZE_MAX",
     struct_size_max,
     ANYCL_ERROR_VERSION,
     {"struct_size", "18446744073709551615", "anycl_model_options_init"},
     0},
    {"struct_size 8",
     struct_size_small,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"struct_size is 8", "anycl_model_options_init", ""},
     0},
    {"dropout NaN", dropout_nan, ANYCL_ERROR_INVALID_ARGUMENT, {"anycl_model_create", "dropout", "nan"}, 0},
    {"input 2^61+1 features",
     input_overflows_weights,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_model_create", "input_shape", "weights"},
     0},
    {"input_shape 2^30 cubed",
     input_shape_overflows,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_model_create", "input_shape", "size_t"},
     0},
    {"one class", one_class, ANYCL_ERROR_INVALID_ARGUMENT, {"outputs is 1", "at least 2 classes", "mse"}, 0},
    {"a billion outputs",
     a_billion_outputs,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_model_create", "outputs is 1000000000", ""},
     0},
    {"layers not UTF-8",
     layers_not_utf8,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"options.layers", "\\xFF\\xFE\\x01", ""},
     0},
    {"pool with an activation",
     pool_with_activation,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"options.layers", "pool2:relu", "only Dense"},
     0},
    {"batchnorm with softmax",
     batchnorm_with_softmax,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"options.layers", "bn:softmax", ""},
     0},
    {"batchnorm with its own relu", batchnorm_with_relu, ANYCL_OK, {"", "", ""}, 0},
    {"unknown loss", unknown_loss, ANYCL_ERROR_INVALID_ARGUMENT, {"options.loss", "hinge", ""}, 0},
    {"data set of one class",
     dataset_one_class,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_dataset_create_classes", "classes is 1", "at least 2 classes"},
     0},
    {"label -1",
     dataset_negative_label,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"labels[3] is -1", "classes-1", ""},
     0},
    {"x infinite",
     dataset_infinite_x,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_dataset_create_classes", "x[3] is inf", "finite"},
     0},
    {"target NaN",
     dataset_nan_target,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_dataset_create_targets", "targets[3] is nan", ""},
     0},
    {"outputs 0",
     dataset_zero_outputs,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_dataset_create_targets", "outputs is 0", ""},
     0},
    {"weight index past the end",
     weight_index_past_end,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_model_get_weights", "index 99", "4 weight arrays"},
     0},
    {"weight NaN",
     weight_nan,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_model_set_weights", "values[1]", "finite"},
     0},
    {"NULL out-pointer",
     weight_count_null_out,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_model_weight_count", "arrays is NULL", ""},
     0},
    {"save onto a folder",
     save_onto_a_folder,
     ANYCL_ERROR_IO,
     {"cannot write", "choose another path", ""},
     0},
    {"save into a missing folder",
     save_into_a_missing_folder,
     ANYCL_ERROR_IO,
     {"no-such-folder", "does not exist", ""},
     0},
    {"save to a 5000-character path", save_a_5000_character_path, ANYCL_ERROR_IO, {"cannot", "aaaa", ""}, 0},
    {"save under a file", save_under_a_file, ANYCL_ERROR_IO, {"plain.anycl", "not a folder", ""}, 0},
    {"a NUL in a model file",
     load_a_nul_in_the_architecture,
     ANYCL_ERROR_DATA,
     {"with-nul-byte.anycl", "den\\x00se", ""},
     0},
    {"a bad spec in $ANYCL_DEVICE",
     runtime_from_a_bad_env_spec,
     ANYCL_ERROR_DEVICE,
     {BAD_ENV_SPEC_WORDS, "unset ANYCL_DEVICE", ""},
     1},
    {"NULL runtime out",
     null_runtime_out,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_runtime_create", "out is NULL", ""},
     0},
    {"NULL devices length",
     null_devices_length,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_devices_json", "length is NULL", ""},
     0},
    {"NULL model out",
     null_model_out,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_model_create", "out is NULL", ""},
     0},
    {"NULL load out",
     null_load_out,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_model_load", "out is NULL", ""},
     0},
    {"NULL input size",
     null_input_size,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_model_input_size", "features is NULL", ""},
     0},
    {"NULL output size",
     null_output_size,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_model_output_size", "outputs is NULL", ""},
     0},
    {"NULL input shape",
     null_input_shape,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_model_input_shape", "shape is NULL", ""},
     0},
    {"NULL has_weights",
     null_has_weights,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_model_has_weights", "has_weights is NULL", ""},
     0},
    {"NULL loss length",
     null_loss_length,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_model_loss", "length is NULL", ""},
     0},
    {"NULL summary length",
     null_summary_length,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_model_summary", "length is NULL", ""},
     0},
    {"NULL weight ndim",
     null_weight_ndim,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_model_weight_shape", "ndim is NULL", ""},
     0},
    {"NULL weight shape",
     null_weight_shape,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_model_weight_shape", "shape is NULL", ""},
     0},
    {"NULL weights out",
     null_weights_out,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_model_get_weights", "out is NULL", ""},
     0},
    {"NULL dataset out",
     null_dataset_out,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_dataset_create_classes", "out is NULL", ""},
     0},
    {"NULL dataset count",
     null_dataset_count,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_dataset_count", "count is NULL", ""},
     0},
    {"export onto a folder", export_onto_a_folder, ANYCL_ERROR_IO, {"cannot write", "directory", ""}, 0},
    {"export into a missing folder",
     export_into_a_missing_folder,
     ANYCL_ERROR_IO,
     {"no-such-folder", "does not exist", ""},
     0},
#ifndef _WIN32
    {"save onto /dev/full", save_onto_dev_full, ANYCL_ERROR_IO, {"/dev/full", "character device", ""}, 0},
    {"save to a path not UTF-8",
     save_a_path_not_utf8,
     ANYCL_ERROR_IO,
     {"no-such-\\xFF", "does not exist", ""},
     0},
    {"load a path not UTF-8",
     load_a_path_not_utf8,
     ANYCL_ERROR_DATA,
     {"missing-\\xFE\\xFF.anycl", "not found", ""},
     0},
#endif
    {"NULL metric out",
     null_evaluate_metric,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_evaluate_metric", "metric is NULL", ""},
     1},
    {"NULL predictions",
     null_predictions,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_predict", "out is NULL", ""},
     1},
    {"NULL history with a capacity",
     null_history_with_capacity,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_train", "history is NULL but history_capacity is 5", ""},
     1},
    {"classifier trained on targets",
     train_classifier_on_targets,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_train: the train data set holds float targets", "options.loss = \"mse\"",
      "anycl_dataset_create_classes"},
     1},
    {"regressor trained on labels",
     train_regressor_on_labels,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_train: the train data set holds class labels", "options.loss", "anycl_dataset_create_targets"},
     1},
    {"data of other features",
     train_on_other_features,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_train: the train data set has 4 features", "takes 3", "options.input_shape"},
     1},
    {"unknown optimizer",
     train_unknown_optimizer,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_train: options.optimizer", "adagrad", ""},
     1},
    {"train struct_size SIZE_MAX",
     train_struct_size_huge,
     ANYCL_ERROR_VERSION,
     {"anycl_train", "18446744073709551615", "anycl_train_options_init"},
     1},
    {"validation_split NaN",
     train_validation_split_nan,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_train", "options.validation_split is nan", ""},
     1},
    {"lr infinite",
     train_lr_infinite,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_train", "options.lr is inf", ""},
     1},
    {"unknown lr_schedule",
     schedule_unknown,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_train: options.lr_schedule is 'linear'", "\"exponential\", \"step\", \"cosine\", \"plateau\"",
      ""},
     1},
    {"decay_rate NaN",
     schedule_decay_rate_nan,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_train", "options.decay_rate is nan", ""},
     1},
    {"decay_rate 1.5",
     schedule_decay_rate_above_1,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_train: options.decay_rate is 1.5", "(0, 1]", ""},
     1},
    {"decay_steps 0",
     schedule_decay_steps_0,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_train: options.decay_steps is 0", "> 0", ""},
     1},
    {"decay_steps inf",
     schedule_decay_steps_inf,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_train", "options.decay_steps is inf", ""},
     1},
    {"alpha -0.5",
     schedule_alpha_negative,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_train: options.alpha is -0.5", "[0, 1]", ""},
     1},
    {"factor 1",
     schedule_factor_1,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_train: options.factor is 1", "(0, 1)", ""},
     1},
    {"min_lr -inf",
     schedule_min_lr_minus_inf,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_train", "options.min_lr is -inf", ""},
     1},
    {"step boundaries NULL",
     schedule_step_null_boundaries,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_train: options.boundary_count is 2", "options.boundaries is NULL", ""},
     1},
    {"step value NaN",
     schedule_step_value_nan,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_train", "options.values[1] is nan", ""},
     1},
    {"step boundaries decreasing",
     schedule_step_decreasing,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_train: options.boundaries must increase", "10 follows 20", ""},
     1},
    {"step without boundaries",
     schedule_step_no_boundaries,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_train: options.values", "0 boundaries", "one value more"},
     1},
    {"plateau on val_loss without validation",
     schedule_plateau_val_loss_without_validation,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_train: options.monitor is \"val_loss\"", "no validation data", "options.validation_split"},
     1},
    {"plateau monitor accuracy",
     schedule_plateau_monitor_accuracy,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_train: options.monitor is 'accuracy'", "val_loss, loss", ""},
     1},
    {"train struct_size of API version 1", train_struct_size_version_1, ANYCL_OK, {"", "", ""}, 1},
    {"train struct_size of no version",
     train_struct_size_between_versions,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_train: options.struct_size is", "anycl_train_options_init", ""},
     1},
    {"checkpoint folder under a file",
     train_checkpoint_under_a_file,
     ANYCL_ERROR_IO,
     {"anycl_train", "checkpoint folder", ""},
     1},
    {"resume from a missing checkpoint",
     resume_from_missing,
     ANYCL_ERROR_DATA,
     {"anycl_train: options.resume_from", "no-such-run", "not found"},
     1},
    {"resume from another model's checkpoint",
     resume_from_another_model,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_train: options.resume_from", "the checkpoint's model differs", ""},
     1},
    {"train struct_size of API version 2", train_struct_size_version_2, ANYCL_OK, {"", "", ""}, 1},
    {"warmup_target NaN",
     warmup_target_nan,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_train", "options.warmup_target is nan", "finite"},
     1},
    {"warmup_target -0.1",
     warmup_target_negative,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_train: options.warmup_target is -0.1", "(0, 10]", "0 for no warm-up"},
     1},
    {"warmup_steps 2.5",
     warmup_steps_fraction,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_train: options.warmup_steps is 2.5", "whole number of steps", ""},
     1},
    {"warmup_steps -3",
     warmup_steps_negative,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_train: options.warmup_steps is -3", ">= 0", ""},
     1},
    {"warm-up on an exponential schedule",
     warmup_on_exponential,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_train: options.warmup_target is 0.1 but the schedule is exponential", "CosineDecay's",
      "lr_schedule \"cosine\""},
     1},
    {"warm-up without a schedule",
     warmup_without_schedule,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_train: options.warmup_target is 0.1", "options.lr_schedule is NULL",
      "pass lr_schedule \"cosine\""},
     1},
    {"train struct_size of API version 3", train_struct_size_version_3, ANYCL_OK, {"", "", ""}, 1},
    {"evaluate with a NULL out-pointer",
     evaluate_null_out,
     ANYCL_ERROR_INVALID_ARGUMENT,
     {"anycl_evaluate", "loss is NULL", ""},
     1},
};

/* Valid UTF-8 with no control bytes but newline and tab. */
static int clean_text(const char* text) {
  const unsigned char* p = (const unsigned char*)text;
  while (*p) {
    if (*p < 0x80) {
      if ((*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7F) return 0;
      ++p;
      continue;
    }
    const int len = (*p >> 5) == 0x6 ? 2 : (*p >> 4) == 0xE ? 3 : (*p >> 3) == 0x1E ? 4 : 0;
    if (len == 0) return 0;
    for (int k = 1; k < len; ++k)
      if ((p[k] & 0xC0) != 0x80) return 0;
    p += len;
  }
  return 1;
}

int main(int argc, char** argv) {
  if (argc > 1) scratch = argv[1];
  CHECK(strcmp(anycl_status_name(ANYCL_ERROR_IO), "ANYCL_ERROR_IO") == 0);
  CHECK(ANYCL_ERROR_IO == 12 && ANYCL_ERROR_INTERNAL == 11); /* appended: no value renumbered */
  const anycl_status device = anycl_runtime_create(NULL, &rt);
  g_model = model_with_weights(0.25f);
  const int32_t labels[4] = {0, 1, 0, 1};
  CHECK(g_model && anycl_dataset_create_classes(x12, 4, 3, labels, 2, &g_data) == ANYCL_OK);
  int skipped = 0, unsupported = 0;
  for (size_t i = 0; i < sizeof rows / sizeof rows[0]; ++i) {
    const Row* r = &rows[i];
    if (r->needs_device && device != ANYCL_OK) {
      ++skipped;
      continue;
    }
    const anycl_status s = r->call();
    if (s == ROW_SKIPPED) {
      ++unsupported;
      continue;
    }
    const char* message = anycl_last_error();
    int words_ok = 1;
    for (int w = 0; w < 3; ++w)
      if (r->words[w][0] && !strstr(message, r->words[w])) words_ok = 0;
    if (s != r->status || !words_ok || !clean_text(message)) {
      fprintf(stderr, "row '%s': returned %s, expected %s with '%s', '%s', '%s'%s; message: %s\n", r->name,
              anycl_status_name(s), anycl_status_name(r->status), r->words[0], r->words[1], r->words[2],
              clean_text(message) ? "" : " (and not clean UTF-8)", message);
      ++c_api_failures;
    }
  }
  anycl_dataset_destroy(g_data);
  anycl_model_destroy(g_model);
  anycl_runtime_destroy(rt);
  if (unsupported)
    fprintf(stderr, "%d rows need what this build lacks (ONNX export, CLBlast)\n", unsupported);
  if (skipped) {
    fprintf(stderr, "%d rows need an OpenCL device\n", skipped);
    if (c_api_failures == 0) return skip_or_fail("no OpenCL device for the training rows");
  }
  printf("%d hostile calls, %d failures\n", (int)(sizeof rows / sizeof rows[0]), c_api_failures);
  return c_api_failures != 0;
}
