// What the C API's opaque handles hold, and the guard every entry point runs its body in: C++
// exceptions become a status code plus the thread's last-error text, so none crosses anycl.h.
#pragma once

#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <utility>

#include "anycl/anycl.h"
#include "anycl/data/dataset.hpp"
#include "anycl/runtime.hpp"
#include "anycl/train/model_file.hpp"
#include "anycl/train/prediction.hpp"

// Threads (docs/c-api.md, "Threads"): every call that enqueues work holds its model's and its
// runtime's locks for the whole call (std::scoped_lock over both, so two calls taking them in any
// order cannot deadlock). One runtime thus runs one call at a time: its queue, cached kernels (whose
// arguments a launch sets) and CLBlast state are never used from two threads at once. The locks are
// recursive so that a training callback may predict, evaluate or save on the same thread.
struct anycl_runtime {
  std::unique_ptr<anycl::Runtime> rt;
  std::recursive_mutex work;  // held by anycl_predict, anycl_evaluate and anycl_train
  // Unique among the runtimes this process makes: a model's cached build names its runtime by it,
  // not by address (a new runtime may get a destroyed one's address, and the build would be stale).
  uint64_t serial = 0;
};

struct anycl_model {
  anycl::SavedModel saved;  // architecture, classes and (when has_weights) the current weights
  bool has_weights = false;
  // Held by anycl_predict, anycl_evaluate and anycl_train (and its callbacks); mutable so that the
  // calls taking a const model (save, export) can hold it too (lock_model).
  mutable std::recursive_mutex use;
  bool training = false;  // inside anycl_train: a nested anycl_train of this model is refused
  // The model built on a device for predict/evaluate, kept while the runtime, batch and weights
  // stay the same (so repeated batch-1 predictions do not rebuild it), and its Predictor (input and
  // output buffers, softmax kernel), made on the first anycl_predict. Declared after `built`, which
  // it refers to, so it goes first.
  std::unique_ptr<anycl::Sequential> built;
  std::unique_ptr<anycl::Predictor> predictor;
  uint64_t built_on = 0;  // the runtime's serial
  size_t built_batch = 0;
  /// Drops the device copy (new weights, another runtime or a larger batch).
  void forget_built() {
    predictor.reset();
    built.reset();
    built_on = 0;
    built_batch = 0;
  }
};

struct anycl_dataset {
  anycl::data::Dataset host;
};

namespace anycl::detail::c_api {

/// Records `message` as the calling thread's last error and returns `status`.
anycl_status fail(anycl_status status, const std::string& message);
/// Clears the calling thread's last error.
void clear_error();
/// The status and message of the exception in flight (call from a catch block only).
anycl_status from_current_exception();

/// Runs `body` (returning void) and maps whatever it throws to a status.
template <typename F>
anycl_status guarded(F&& body) noexcept {
  try {
    clear_error();
    std::forward<F>(body)();
    return ANYCL_OK;
  } catch (...) {
    return from_current_exception();
  }
}

/// ValidationError naming `call` and `what` when `p` is null.
void require(const void* p, const char* call, const char* what);
/// Copies `text` to a caller buffer: ANYCL_ERROR_BUFFER_TOO_SMALL (via an exception) when it
/// does not fit; `*length` always receives the text's length.
void copy_text(const std::string& text, char* buffer, size_t capacity, size_t* length, const char* call);
/// A failure with a status of its own (a buffer too small, a feature this build lacks), for the
/// statuses no anycl::Error class stands for.
struct StatusError : std::exception {
  anycl_status status;
  std::string message;
  StatusError(anycl_status s, std::string m) : status(s), message(std::move(m)) {}
  const char* what() const noexcept override { return message.c_str(); }
};

/// The locks of a call that enqueues work on `runtime` for `model` (both recursive, taken together
/// without deadlock). Throws UnsupportedError in a child forked after OpenCL was used, which would hang.
std::scoped_lock<std::recursive_mutex, std::recursive_mutex> lock_for_work(anycl_model& model,
                                                                           anycl_runtime& runtime,
                                                                           const char* call);

/// The model's lock alone, for calls that read its weights without running work (save, export):
/// anycl_train replaces them at each epoch end.
inline std::unique_lock<std::recursive_mutex> lock_model(const anycl_model& model) {
  return std::unique_lock<std::recursive_mutex>(model.use);
}

/// The model built on `rt` for batches up to `batch`, holding the current weights (cached).
Sequential& built_model(anycl_model& model, const anycl_runtime& rt, size_t batch);
/// The Predictor of that model (cached with it).
Predictor& model_predictor(anycl_model& model, const anycl_runtime& rt, size_t batch);

}  // namespace anycl::detail::c_api
