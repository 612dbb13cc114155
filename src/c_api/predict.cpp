// Inference through the C API: predictions into a caller buffer, on the model and Predictor built
// once per runtime (handles.hpp), so repeated small calls rebuild, allocate and copy nothing beyond
// the input's write and the output's read. Evaluation is evaluate.cpp.
#include <fmt/format.h>

#include <algorithm>
#include <limits>

#include "anycl/error.hpp"
#include "anycl/train/prediction.hpp"
#include "c_api/handles.hpp"
#include "data/feature_checks.hpp"

using namespace anycl::detail::c_api;

namespace {
constexpr size_t kPredictBatch = 256;  // rows per device batch
}  // namespace

extern "C" {

anycl_status anycl_predict(anycl_model* model, anycl_runtime* runtime, const float* x, size_t count,
                           float* out, size_t out_capacity) {
  const char* call = "anycl_predict";
  return guarded([&] {
    require(model, call, "model");
    require(runtime, call, "runtime");
    require(x, call, "x");
    require(out, call, "out");
    const auto lock = lock_for_work(*model, *runtime, call);
    anycl::Predictor& predictor =
        model_predictor(*model, *runtime, std::min(std::max<size_t>(count, 1), kPredictBatch));
    const size_t d = predictor.model().input_features(), k = predictor.model().output_features();
    if (count == 0) throw anycl::ValidationError("anycl_predict: count is 0 — pass at least one sample");
    if (count > out_capacity / k)
      throw anycl::ValidationError(fmt::format(
          "anycl_predict: out holds {} floats, {} samples × {} outputs need {} — pass a larger buffer",
          out_capacity, count, k, count * k));
    if (count > std::numeric_limits<size_t>::max() / d)
      throw anycl::ValidationError(fmt::format("anycl_predict: {} samples × {} features overflow", count, d));
    anycl::detail::check_finite(call, "x", x, count * d);
    predictor.run(x, count, out);  // one write, the forward pass, one blocking read per device batch
  });
}

}  // extern "C"
