// Keras' evaluate through the C API: the loss and the model's own metric (accuracy for a
// classifier, mean absolute error for regression) on a labelled data set, dropout off.
#include <algorithm>

#include "anycl/train/evaluator.hpp"
#include "c_api/handles.hpp"

using namespace anycl::detail::c_api;

namespace {
constexpr size_t kEvaluateBatch = 256;  // rows per device batch, as anycl_evaluate
}  // namespace

extern "C" {

anycl_status anycl_evaluate_metric(anycl_model* model, anycl_runtime* runtime, const anycl_dataset* data,
                                   double* loss, double* metric) {
  const char* call = "anycl_evaluate_metric";
  return guarded([&] {
    require(model, call, "model");
    require(runtime, call, "runtime");
    require(data, call, "data");
    require(loss, call, "loss");
    require(metric, call, "metric");
    const size_t batch = std::min(data->host.count, kEvaluateBatch);
    anycl::Sequential& built = built_model(*model, *runtime, batch);
    const anycl::DeviceDataset device(*runtime->rt, data->host);
    anycl::Evaluator evaluator(built, batch);
    const anycl::EvalStats s = evaluator.evaluate(device);
    *loss = s.loss;
    *metric = built.loss() == "softmax_cross_entropy" ? s.accuracy : s.mae;
  });
}

}  // extern "C"
