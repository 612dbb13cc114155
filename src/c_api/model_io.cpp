// Writing a model through the C API: the model file (atomic; an existing file survives a failed
// write) and ONNX export, both from the handle's host copy of the architecture and weights.
#include "anycl/error.hpp"
#include "anycl/util/atomic_file.hpp"
#include "c_api/handles.hpp"
#ifdef ANYCL_WITH_ONNX
#include "anycl/export/onnx.hpp"
#endif

using namespace anycl::detail::c_api;

namespace {

void require_weights(const anycl_model& model, const char* call) {
  if (!model.has_weights)
    throw anycl::ValidationError(std::string(call) +
                                 ": the model has no weights yet — train it (anycl_train) or load one first");
}

}  // namespace

extern "C" {

anycl_status anycl_model_save(const anycl_model* model, const char* path) {
  return guarded([&] {
    require(model, "anycl_model_save", "model");
    require(path, "anycl_model_save", "path");
    const auto lock = lock_model(*model);  // another thread's anycl_train replaces the weights under it
    require_weights(*model, "anycl_model_save");
    const auto& s = model->saved;
    anycl::write_file_atomically(path, anycl::encode_model(s.spec, s.num_classes, s.parameters));
  });
}

anycl_status anycl_model_export_onnx(const anycl_model* model, const char* path) {
  return guarded([&] {
    require(model, "anycl_model_export_onnx", "model");
    require(path, "anycl_model_export_onnx", "path");
    const auto lock = lock_model(*model);  // another thread's anycl_train replaces the weights under it
    require_weights(*model, "anycl_model_export_onnx");
#ifdef ANYCL_WITH_ONNX
    anycl::export_onnx(model->saved, path);
#else
    throw StatusError(
        ANYCL_ERROR_UNSUPPORTED,
        "anycl_model_export_onnx: this anycl was built without ONNX export — install protobuf "
        "and onnx.proto (Debian: libprotobuf-dev protobuf-compiler libonnx-dev) and rebuild with "
        "-DANYCL_WITH_ONNX=ON");
#endif
  });
}

}  // extern "C"
