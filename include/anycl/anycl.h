/* anycl's C API: the one stable boundary of the shared library, for C and for every language that
 * binds to C (Python's ctypes, C#, Swift, Rust, Java). Plain C11, compiles as C and as C++; no
 * Boost, OpenCL or C++ type appears here and no C++ exception crosses it (docs/c-api.md).
 *
 *   if (anycl_check_version(ANYCL_API_VERSION) != ANYCL_OK) fail(anycl_last_error());
 *   anycl_runtime* rt; anycl_runtime_create("", &rt);
 *   ...
 *   anycl_runtime_destroy(rt);
 *
 * Rules: every call returns an anycl_status (ANYCL_OK = 0); on failure anycl_last_error() holds
 * the calling thread's message. Handles are created and destroyed in pairs (destroy accepts NULL).
 * Option structs carry their own size (set by the *_init function) so later versions can append
 * fields without breaking callers built against this header. */
#ifndef ANYCL_ANYCL_H
#define ANYCL_ANYCL_H

#include <stddef.h>
#include <stdint.h>

/* ELF: the C API is exported while the library hides what is not public API. Windows (mingw-w64)
 * exports every symbol of the DLL, so nothing is needed there. */
#if defined(_WIN32)
#define ANYCL_C_API
#else
#define ANYCL_C_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/** The API version this header describes: grows by one when functions or option fields are added
 * (old callers keep working); a caller built against version N runs on a library of version >= N. */
#define ANYCL_API_VERSION 5

/** What every call returns. */
typedef enum anycl_status {
  ANYCL_OK = 0,
  ANYCL_ERROR_INVALID_ARGUMENT = 1,  /* bad argument, shape, option or label (anycl::ValidationError) */
  ANYCL_ERROR_DEVICE = 2,            /* no OpenCL device, or a device spec matched none */
  ANYCL_ERROR_OPENCL = 3,            /* an OpenCL or CLBlast call failed */
  ANYCL_ERROR_BUILD = 4,             /* an OpenCL program failed to compile */
  ANYCL_ERROR_DATA = 5,              /* a file is missing, malformed or inconsistent */
  ANYCL_ERROR_NUMERICAL = 6,         /* training diverged (NaN or infinite loss or weights) */
  ANYCL_ERROR_OUT_OF_MEMORY = 7,     /* host memory ran out */
  ANYCL_ERROR_UNSUPPORTED = 8,       /* this build lacks the feature (ONNX export; clblast.dll for GEMM) */
  ANYCL_ERROR_VERSION = 9,           /* the library is older than the header the caller was built with */
  ANYCL_ERROR_BUFFER_TOO_SMALL = 10, /* a caller buffer is too small; the needed size is returned */
  ANYCL_ERROR_INTERNAL = 11,         /* any other failure: a bug in anycl, please report it */
  ANYCL_ERROR_IO = 12                /* a file or folder could not be written or created (disk, permission) */
} anycl_status;

/** Opaque handles. */
typedef struct anycl_runtime anycl_runtime; /* one device: context, queue, compiled kernels */
typedef struct anycl_model anycl_model;     /* architecture + weights (host copy; built on use) */
typedef struct anycl_dataset anycl_dataset; /* features + labels or targets, copied from the caller */

/* --- version, errors ------------------------------------------------------------------------- */

/** The library's API version (ANYCL_API_VERSION it was built with). */
ANYCL_C_API int anycl_api_version(void);
/** The library's release, e.g. "0.1.0". Static storage. */
ANYCL_C_API const char* anycl_version_string(void);
/** ANYCL_OK when this library serves callers built against `header_api_version`
 * (pass ANYCL_API_VERSION); ANYCL_ERROR_VERSION otherwise. Call it first. */
ANYCL_C_API anycl_status anycl_check_version(int header_api_version);
/** The calling thread's message for its last failed call ("" if none). Valid until the thread's
 * next anycl call. */
ANYCL_C_API const char* anycl_last_error(void);
/** The symbolic name of a status, e.g. "ANYCL_ERROR_DATA". Static storage. */
ANYCL_C_API const char* anycl_status_name(anycl_status status);

/* --- devices and runtimes ---------------------------------------------------------------------- */

/** Every OpenCL device as the JSON text of `anycl devices --json`. Writes at most `capacity`
 * bytes (NUL included) into `buffer` and the text's length (without NUL) into `*length`; a NULL
 * or too small buffer returns ANYCL_ERROR_BUFFER_TOO_SMALL with `*length` set (ask, then fetch). */
ANYCL_C_API anycl_status anycl_devices_json(char* buffer, size_t capacity, size_t* length);

/** A runtime on the device `device_spec` names (index, p:d, gpu, cpu, vendor or name part, as
 * --device); NULL or "" means $ANYCL_DEVICE, else the best device. Compiles the kernels. */
ANYCL_C_API anycl_status anycl_runtime_create(const char* device_spec, anycl_runtime** out);
ANYCL_C_API void anycl_runtime_destroy(anycl_runtime* runtime);
/** The runtime's device name (same buffer rules as anycl_devices_json). */
ANYCL_C_API anycl_status anycl_runtime_device_name(const anycl_runtime* runtime, char* buffer,
                                                   size_t capacity, size_t* length);

/* --- models ------------------------------------------------------------------------------------ */

/** A model described as on anycl's command line. Fill with anycl_model_options_init first. */
typedef struct anycl_model_options {
  size_t struct_size;     /* sizeof(anycl_model_options), set by anycl_model_options_init */
  const char* layers;     /* --layers grammar: "512,512", "conv32x3,pool2,flatten,128", "none";
                             a size or conv token may name its own activation: "64:tanh,32:relu" */
  const char* activation; /* hidden layers: relu (default), tanh, sigmoid, leaky_relu, elu, gelu, linear */
  const char* init;       /* glorot_uniform (default) or he_uniform */
  float dropout;          /* after each hidden Dense (default 0.2; 0: none) */
  const char* loss;       /* softmax_cross_entropy (default), mse, mae, huber or binary_crossentropy */
  size_t input_shape[3];  /* per sample: {features, 0, 0} or {channels, height, width} */
  size_t outputs;         /* classes (cross-entropy) or target values (mse) */
} anycl_model_options;

/** Defaults: layers "512,512", relu, glorot_uniform, dropout 0.2, softmax_cross_entropy. */
ANYCL_C_API void anycl_model_options_init(anycl_model_options* options);
/** A new model from `options`; its weights are initialised from the seed when it is first trained. */
ANYCL_C_API anycl_status anycl_model_create(const anycl_model_options* options, anycl_model** out);
/** A model read from a model file (.anycl, `anycl train --save`), weights included. */
ANYCL_C_API anycl_status anycl_model_load(const char* path, anycl_model** out);
ANYCL_C_API void anycl_model_destroy(anycl_model* model);
/** Values per input sample and per output row (classes, or regression outputs). */
ANYCL_C_API anycl_status anycl_model_input_size(const anycl_model* model, size_t* features);
ANYCL_C_API anycl_status anycl_model_output_size(const anycl_model* model, size_t* outputs);
/** The model's loss name, "softmax_cross_entropy", "mse", "mae", "huber" or "binary_crossentropy" (same
 * buffer rules as anycl_devices_json). */
ANYCL_C_API anycl_status anycl_model_loss(const anycl_model* model, char* buffer, size_t capacity,
                                          size_t* length);
/** Whether the model holds weights (trained or loaded): 1 or 0. */
ANYCL_C_API anycl_status anycl_model_has_weights(const anycl_model* model, int* has_weights);
/** The Keras-style summary table (same buffer rules as anycl_devices_json). */
ANYCL_C_API anycl_status anycl_model_summary(const anycl_model* model, char* buffer, size_t capacity,
                                             size_t* length);
/** Writes the model file atomically (an existing file survives a failed write). Needs weights. */
ANYCL_C_API anycl_status anycl_model_save(const anycl_model* model, const char* path);
/** Writes the model as ONNX (opset 13; softmax output for classifiers). ANYCL_ERROR_UNSUPPORTED
 * when the library was built without ONNX export. Needs weights. */
ANYCL_C_API anycl_status anycl_model_export_onnx(const anycl_model* model, const char* path);

/* --- data sets --------------------------------------------------------------------------------- */

/** `count` samples of `features` floats (row-major, copied) with class indices in [0, classes). */
ANYCL_C_API anycl_status anycl_dataset_create_classes(const float* x, size_t count, size_t features,
                                                      const int32_t* labels, size_t classes,
                                                      anycl_dataset** out);
/** The same from bytes (images), scaled by 1/255 on the device as `anycl train` does. */
ANYCL_C_API anycl_status anycl_dataset_create_classes_u8(const uint8_t* x, size_t count, size_t features,
                                                         const int32_t* labels, size_t classes,
                                                         anycl_dataset** out);
/** `count` samples of `features` floats with `outputs` float targets each (regression). */
ANYCL_C_API anycl_status anycl_dataset_create_targets(const float* x, size_t count, size_t features,
                                                      const float* targets, size_t outputs,
                                                      anycl_dataset** out);
ANYCL_C_API void anycl_dataset_destroy(anycl_dataset* dataset);
ANYCL_C_API anycl_status anycl_dataset_count(const anycl_dataset* dataset, size_t* count);

/* --- training ---------------------------------------------------------------------------------- */

/** A live view within an epoch, and one completed epoch's figures. */
typedef struct anycl_progress {
  size_t epoch, epochs, step, steps; /* 1-based epoch; steps done in it of `steps` */
  double loss, accuracy, seconds;    /* running means over the epoch so far */
} anycl_progress;

typedef struct anycl_epoch {
  size_t epoch; /* 1-based */
  double loss, accuracy;
  int has_validation; /* 1 when val_loss/val_accuracy hold figures */
  double val_loss, val_accuracy;
  double seconds;
  /* API version 2 (a caller whose anycl_train_options.struct_size is version 1's receives version 1's
   * anycl_epoch, without it, in `history`): */
  double learning_rate; /* the rate of the epoch's last step (Keras' logs["learning_rate"]) */
} anycl_epoch;

/** Callbacks return 0 to go on, non-zero to stop after the current step (the model keeps the
 * weights reached, and a checkpoint is written when a folder was given). */
typedef int (*anycl_progress_callback)(const anycl_progress* progress, void* user);
typedef int (*anycl_epoch_callback)(const anycl_epoch* epoch, void* user);

typedef struct anycl_train_options {
  size_t struct_size;         /* sizeof(anycl_train_options), set by anycl_train_options_init */
  size_t epochs;              /* default 20 */
  size_t batch;               /* default 128 */
  const char* optimizer;      /* sgd, momentum, nesterov, rmsprop (default), adam, adamw */
  float lr;                   /* 0: the optimizer's default (0.001; 0.01 for the SGD family) */
  uint64_t seed;              /* weights, dropout and shuffling (default 1) */
  double validation_split;    /* hold out the last fraction of the training set, in [0, 1) */
  const char* checkpoint_dir; /* NULL or "": none; else a checkpoint each epoch end and on a stop */
  double progress_interval_s; /* > 0: call on_progress at most this often */
  anycl_progress_callback on_progress;
  anycl_epoch_callback on_epoch;
  void* user; /* passed to both callbacks */
  /* API version 2: a learning-rate schedule, Keras' (docs/training.md). A struct_size of version 1
   * (a caller built against that header) trains at the constant lr. lr_schedule: NULL or "" for a
   * constant rate, "exponential" (ExponentialDecay), "step" (PiecewiseConstantDecay), "cosine"
   * (CosineDecay) or "plateau" (ReduceLROnPlateau); then the fields of that kind: */
  const char* lr_schedule;
  double decay_steps;         /* exponential, cosine: steps of one decay period, > 0 */
  double decay_rate;          /* exponential: the factor per decay_steps, in (0, 1] */
  int staircase;              /* exponential: 1 decays in whole periods, 0 continuously (default) */
  double alpha;               /* cosine: the final rate as a fraction of lr, in [0, 1] (default 0) */
  const uint64_t* boundaries; /* step: boundary_count increasing step counts */
  size_t boundary_count;      /* step: at least 1 */
  const float* values;        /* step: boundary_count + 1 rates in [0, 10] (lr is not used) */
  const char* monitor;        /* plateau: "val_loss", "loss", or NULL: val_loss with validation data */
  double factor;              /* plateau: the rate's factor at a reduction, in (0, 1) (default 0.1) */
  size_t patience;            /* plateau: epochs without improvement before a reduction (default 10) */
  double min_delta;           /* plateau: the least decrease that counts as improvement (default 1e-4) */
  size_t cooldown;            /* plateau: epochs after a reduction before counting again (default 0) */
  double min_lr;              /* plateau: the lowest rate, in [0, 10] (default 0) */
  /* API version 3: continue an earlier run. NULL or "": start at epoch 1. Else a checkpoint file, or
   * the checkpoint_dir of the run that wrote it: the model takes the checkpoint's weights, and
   * training goes on from its position (optimizer state, schedule, epoch and step) up to `epochs`
   * epochs in all, with the losses and weights the run would have reached without the stop. The
   * model, optimizer, lr, batch, seed, schedule and training data must be the checkpoint's run's
   * (ANYCL_ERROR_INVALID_ARGUMENT naming the difference; ANYCL_ERROR_DATA for a missing or damaged
   * file). `history` then starts with the checkpoint's epochs and `*epochs_done` counts them. */
  const char* resume_from;
  /* API version 4: CosineDecay's linear warm-up, Keras' warmup_target and warmup_steps (a struct_size
   * of version 3 or earlier has none). With warmup_target > 0 and lr_schedule "cosine" the rate rises
   * linearly from lr to warmup_target over warmup_steps steps (from 0 when lr is 0: unset means 0
   * here, not the optimizer's default), then decays from warmup_target to alpha * warmup_target over
   * decay_steps more. Other schedules refuse a warm-up. */
  double warmup_target; /* cosine: the rate the warm-up reaches, in (0, 10]; 0 (default): no warm-up */
  double warmup_steps;  /* cosine: the warm-up's steps, a whole number >= 0 (ignored without a target,
                           as Keras ignores it) */
} anycl_train_options;

/** Defaults as `anycl train`: 20 epochs, batch 128, rmsprop, seed 1, no split, no callbacks, a
 * constant learning rate (and Keras' ReduceLROnPlateau defaults in the plateau fields). */
ANYCL_C_API void anycl_train_options_init(anycl_train_options* options);

/** Trains `model` on `train` on the runtime's device, evaluating on `validation` (may be NULL;
 * used unless options->validation_split > 0) after each epoch. A model without weights starts
 * from the seed's initialisation (bit-identical to `anycl train` with the same flags and seed);
 * one with weights continues from them with a fresh optimizer. `history` (may be NULL) receives
 * up to `history_capacity` epochs; `*epochs_done` (may be NULL) the epochs completed; `*stopped`
 * (may be NULL) 1 when a callback stopped training. A NULL `history` needs `history_capacity` 0. */
ANYCL_C_API anycl_status anycl_train(anycl_model* model, anycl_runtime* runtime, const anycl_dataset* train,
                                     const anycl_dataset* validation, const anycl_train_options* options,
                                     anycl_epoch* history, size_t history_capacity, size_t* epochs_done,
                                     int* stopped);

/** Mean loss and accuracy of the model on `data` (dropout off); for a regression model (mse, mae,
 * huber) `accuracy` holds its metric, the MAE, as anycl_epoch's accuracy fields do; for
 * binary_crossentropy (0/1 float targets) Keras' binary accuracy. Both
 * out-pointers are required, as in every call; anycl_evaluate_metric gives a regressor's MAE. */
ANYCL_C_API anycl_status anycl_evaluate(anycl_model* model, anycl_runtime* runtime, const anycl_dataset* data,
                                        double* loss, double* accuracy);

/** The model's outputs for `count` samples x (count × input size floats): class probabilities
 * (softmax) for a classifier, the sigmoid of each output for binary_crossentropy, predicted
 * values for regression, written to `out`, which must hold
 * `out_capacity` >= count × output size floats. Non-finite inputs are rejected. */
ANYCL_C_API anycl_status anycl_predict(anycl_model* model, anycl_runtime* runtime, const float* x,
                                       size_t count, float* out, size_t out_capacity);

/* --- added in later releases (appended, so earlier declarations keep their places) ------------- */

/** Keras' evaluate: the mean loss and the model's metric on `data` (dropout off) — accuracy for a
 * classifier (class labels; binary accuracy for binary_crossentropy on 0/1 float targets), mean
 * absolute error for a regression model (float targets; the loss is its own: mse, mae or huber).
 * Every out-pointer must be valid. */
ANYCL_C_API anycl_status anycl_evaluate_metric(anycl_model* model, anycl_runtime* runtime,
                                               const anycl_dataset* data, double* loss, double* metric);

/** Weights as Keras lays them out, array by array (what get_weights() lists): per Dense layer its
 * kernel (in, out) then its bias (out); per Conv2D its kernel (kh, kw, in, out) then its bias
 * (out). The number of arrays: */
ANYCL_C_API anycl_status anycl_model_weight_count(const anycl_model* model, size_t* arrays);
/** Array `index`'s dimensions (`*ndim` of them, 1 to 4) into `shape` (unused entries 0). */
ANYCL_C_API anycl_status anycl_model_weight_shape(const anycl_model* model, size_t index, size_t* ndim,
                                                  size_t shape[4]);
/** Copies array `index` (row-major in Keras' shape) into `out`, which holds `capacity` floats.
 * Needs weights (trained, loaded or set). */
ANYCL_C_API anycl_status anycl_model_get_weights(const anycl_model* model, size_t index, float* out,
                                                 size_t capacity);
/** Replaces array `index` with `count` finite floats in Keras' layout (`count` must be its size).
 * On a model without weights the other arrays start at 0: set them all. Training then starts from
 * these weights. */
ANYCL_C_API anycl_status anycl_model_set_weights(anycl_model* model, size_t index, const float* values,
                                                 size_t count);
/** The per-sample input shape as anycl_model_options holds it: {features, 0, 0} or {channels,
 * height, width} (e.g. of a loaded model, to check image arrays against). */
ANYCL_C_API anycl_status anycl_model_input_shape(const anycl_model* model, size_t shape[3]);

/* --- tuning (API version 2) --------------------------------------------------------------------- */

/** Where a tuning is, for anycl_tune's callback (the strings are valid during the call only). */
typedef struct anycl_tune_progress {
  const char* line;    /* what the tuner says: one UTF-8 line without its newline */
  const char* stage;   /* "XgemmDirect", "Xgemm", "GemmRoutine"; "" before the first stage */
  size_t candidates;   /* parameter sets measured so far, over every stage */
  double best_seconds; /* the stage's best exact set so far, one pass over the model's GEMMs; 0: none yet */
  double seconds;      /* since the tuning began */
} anycl_tune_progress;

/** Returns 0 to go on, non-zero to stop once the candidate being measured is done: the best set
 * found so far is kept (stored and applied). */
typedef int (*anycl_tune_callback)(const anycl_tune_progress* progress, void* user);

typedef struct anycl_tune_options {
  size_t struct_size; /* sizeof(anycl_tune_options), set by anycl_tune_options_init */
  int quick;          /* 1: the shortlists only, as first-use tuning (about 95 s on a 2-core CPU) */
  int first_use;      /* 1: tune only where `anycl train` would on first use (then quick) */
  double minutes;     /* time for the search; 0: the default (1.6 quick, else 8; 16 with a CNN's GEMMs) */
  size_t batch;       /* the batch the model trains at, whose GEMMs are timed (default 128) */
  anycl_tune_callback on_progress; /* NULL: none */
  void* user;                      /* passed to on_progress */
} anycl_tune_options;

/** What anycl_tune did (written up to its struct_size, set by anycl_tune_result_init). */
typedef struct anycl_tune_result {
  size_t struct_size;
  int tuned;         /* 1 when it tuned; 0 when first_use found no need (anycl_first_use_tuning_skipped) */
  int stopped;       /* 1 when the callback stopped it: the stages done and the best set found are kept */
  size_t candidates; /* parameter sets measured */
  double seconds;    /* how long the tuning took */
  double ms_before;  /* one pass over the model's GEMMs with the parameters it started from */
  double ms_after;   /* ... and as tuned (0 when stopped before the last stage) */
  /* API version 5 (a caller of an earlier version passes the shorter struct_size: not written): */
  int kept_entry;    /* 1 when nothing beat the parameters compared against by 5 %, so they were kept */
  char against[512]; /* what it was compared against ("the pocl-cpu-avx512.txt parameters", "CLBlast's
                        own parameters"), NUL-terminated, cut at 511 bytes; "" when it did not tune */
} anycl_tune_result;

/** Defaults: a full tuning (not quick, not first_use), the default time, batch 128, no callback. */
ANYCL_C_API void anycl_tune_options_init(anycl_tune_options* options);
ANYCL_C_API void anycl_tune_result_init(anycl_tune_result* result);

/** Tunes CLBlast's GEMM for the runtime's device at the model's GEMMs (as `anycl tune` does): each
 * candidate parameter set compiles and runs in a child process of anycl's worker program
 * (anycl-tune-worker, found beside the library or in <prefix>/libexec/anycl; ANYCL_TUNE_WORKER
 * names another), so a driver crash costs one candidate. The result is stored in the device's
 * tuning file in the cache folder (every later runtime on the device applies it) and applied to
 * `runtime`. With options->first_use, it tunes (quick) only where the device has no tuning of its
 * own, no specific tuning database entry, is a CPU (or ANYCL_AUTOTUNE=on), and neither
 * ANYCL_AUTOTUNE nor ANYCL_TUNING is off; otherwise it returns ANYCL_OK with result->tuned = 0.
 * ANYCL_ERROR_UNSUPPORTED when the worker program is not found (the message names where it looked),
 * ANYCL_ERROR_IO when the tuning file cannot be written. `options` may be NULL (defaults), and so
 * may `result`. */
ANYCL_C_API anycl_status anycl_tune(anycl_model* model, anycl_runtime* runtime,
                                    const anycl_tune_options* options, anycl_tune_result* result);
/** Why first-use tuning would not run on the runtime's device ("" when it would), as text. */
ANYCL_C_API anycl_status anycl_first_use_tuning_skipped(const anycl_runtime* runtime, char* buffer,
                                                        size_t capacity, size_t* length);
/** The path of the device's tuning file ("" when the cache is off), as text. */
ANYCL_C_API anycl_status anycl_tuning_file_path(const anycl_runtime* runtime, char* buffer, size_t capacity,
                                                size_t* length);

#ifdef __cplusplus
}
#endif

#endif /* ANYCL_ANYCL_H */
