// ONNX export in a build without protobuf (ANYCL_WITH_ONNX=OFF): the public calls exist and say
// what is missing, so an application links the same way against every build.
#include "anycl/error.hpp"
#include "anycl/export/onnx.hpp"

namespace anycl {
namespace {

[[noreturn]] void unavailable() {
  throw UnsupportedError(
      "ONNX export: this anycl was built without it — install protobuf and onnx.proto (Debian: "
      "libprotobuf-dev protobuf-compiler libonnx-dev) and rebuild with -DANYCL_WITH_ONNX=ON");
}

}  // namespace

std::string onnx_model_bytes(const SavedModel& /*model*/, const OnnxExportOptions& /*options*/) {
  unavailable();
}

void export_onnx(const SavedModel& /*model*/, const std::string& /*path*/,
                 const OnnxExportOptions& /*options*/) {
  unavailable();
}

}  // namespace anycl
