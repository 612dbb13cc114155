// Evaluation through the C API on a labelled data set, dropout off: anycl_evaluate (loss and the
// accuracy field) and Keras' evaluate, anycl_evaluate_metric (loss and the model's own metric:
// accuracy for a classifier, mean absolute error for regression), both under the call's locks.
#include <algorithm>

#include "anycl/losses/loss.hpp"
#include "anycl/train/evaluator.hpp"
#include "c_api/handles.hpp"

using namespace anycl::detail::c_api;

namespace {

constexpr size_t kEvaluateBatch = 256;  // rows per device batch

// The loss and the evaluator's figures on `data`, under the call's locks (threads sharing the model
// or the runtime get serial results, docs/c-api.md); `data`, `model` and `runtime` checked by `call`.
anycl::EvalStats evaluate_locked(anycl_model* model, anycl_runtime* runtime, const anycl_dataset* data,
                                 const char* call, bool* classifier) {
  require(model, call, "model");
  require(runtime, call, "runtime");
  require(data, call, "data");
  const auto lock = lock_for_work(*model, *runtime, call);
  const size_t batch = std::min(data->host.count, kEvaluateBatch);
  anycl::Sequential& built = built_model(*model, *runtime, batch);
  const anycl::DeviceDataset device(*runtime->rt, data->host);
  anycl::Evaluator evaluator(built, batch);
  *classifier = anycl::loss_info(built.loss()).metric == "accuracy";  // softmax or binary cross-entropy
  return evaluator.evaluate(device);
}

}  // namespace

extern "C" {

anycl_status anycl_evaluate(anycl_model* model, anycl_runtime* runtime, const anycl_dataset* data,
                            double* loss, double* accuracy) {
  const char* call = "anycl_evaluate";
  return guarded([&] {
    require(loss, call, "loss");  // out-pointers are required in every call (anycl.h)
    require(accuracy, call, "accuracy");
    bool classifier = false;
    const anycl::EvalStats s = evaluate_locked(model, runtime, data, call, &classifier);
    *loss = s.loss;
    *accuracy = s.accuracy;
  });
}

anycl_status anycl_evaluate_metric(anycl_model* model, anycl_runtime* runtime, const anycl_dataset* data,
                                   double* loss, double* metric) {
  const char* call = "anycl_evaluate_metric";
  return guarded([&] {
    require(loss, call, "loss");
    require(metric, call, "metric");
    bool classifier = false;
    const anycl::EvalStats s = evaluate_locked(model, runtime, data, call, &classifier);
    *loss = s.loss;
    *metric = classifier ? s.accuracy : s.mae;
  });
}

}  // extern "C"
