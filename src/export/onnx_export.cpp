// SavedModel → onnx::ModelProto through the protobuf classes generated from onnx.proto.
// Weights keep anycl's layout: W is (in, out) row-major, so Gemm needs no transpose.
#include "onnx_export.hpp"

#include <fmt/format.h>

#include "anycl/error.hpp"
#include "onnx.pb.h"
#include "train/atomic_file.hpp"

namespace anycl {
namespace {

void add_float_tensor(onnx::GraphProto& g, const std::string& name, std::vector<int64_t> dims,
                      const float* data) {
  onnx::TensorProto* t = g.add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  size_t n = 1;
  for (int64_t d : dims) t->add_dims(d), n *= size_t(d);
  t->mutable_float_data()->Add(data, data + n);
}

void set_value_info(onnx::ValueInfoProto* v, const std::string& name, const std::string& batch,
                    int64_t width) {
  v->set_name(name);
  onnx::TypeProto_Tensor* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  t->mutable_shape()->add_dim()->set_dim_param(batch);
  t->mutable_shape()->add_dim()->set_dim_value(width);
}

onnx::NodeProto* add_node(onnx::GraphProto& g, const std::string& op, std::vector<std::string> inputs,
                          const std::string& output) {
  onnx::NodeProto* n = g.add_node();
  n->set_op_type(op);
  n->set_name(output);
  for (const auto& in : inputs) n->add_input(in);
  n->add_output(output);
  return n;
}

void add_int_attribute(onnx::NodeProto* n, const std::string& name, int64_t value) {
  onnx::AttributeProto* a = n->add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

}  // namespace

std::string onnx_model_bytes(const SavedModel& model, const OnnxExportOptions& options) {
  onnx::ModelProto m;
  m.set_ir_version(8);  // IR 8 (ONNX 1.10+), which every opset-13 reader accepts
  m.set_producer_name("anycl");
  m.set_producer_version(ANYCL_VERSION);
  m.set_doc_string("MLP trained with anycl; input: pixels / 255, output: class probabilities");
  onnx::OperatorSetIdProto* opset = m.add_opset_import();
  opset->set_domain("");
  opset->set_version(kOnnxOpset);
  onnx::GraphProto& g = *m.mutable_graph();
  g.set_name(options.graph_name);

  std::string x = options.input_name;
  size_t width = model.spec.input_features, offset = 0, dense = 0;
  for (const LayerSpec& layer : model.spec.layers) {
    if (layer.kind == LayerSpec::Kind::dropout) continue;  // identity at inference
    const size_t in = width, out = layer.units;
    if (offset + in * out + out > model.parameters.size())
      throw ValidationError(
          fmt::format("ONNX export: dense layer {} needs {} parameters beyond offset {}, the model "
                      "has {} — the model file is inconsistent; save it again",
                      dense, in * out + out, offset, model.parameters.size()));
    const std::string w = fmt::format("dense{}.W", dense), b = fmt::format("dense{}.b", dense);
    add_float_tensor(g, w, {int64_t(in), int64_t(out)}, model.parameters.data() + offset);
    add_float_tensor(g, b, {int64_t(out)}, model.parameters.data() + offset + in * out);
    offset += in * out + out;
    std::string y = fmt::format("dense{}", dense);
    onnx::NodeProto* gemm = add_node(g, "Gemm", {x, w, b}, y);  // y = x·W + b
    add_int_attribute(gemm, "transA", 0);
    add_int_attribute(gemm, "transB", 0);
    const char* op = layer.activation == Activation::relu      ? "Relu"
                     : layer.activation == Activation::tanh    ? "Tanh"
                     : layer.activation == Activation::sigmoid ? "Sigmoid"
                                                               : nullptr;
    if (op) {
      const std::string act = fmt::format("{}.{}", y, to_string(layer.activation));
      add_node(g, op, {y}, act);
      y = act;
    }
    x = y, width = out, ++dense;
  }
  if (dense == 0) throw ValidationError("ONNX export: the model has no dense layer — nothing to export");
  if (offset != model.parameters.size())
    throw ValidationError(
        fmt::format("ONNX export: the architecture uses {} parameters, the model holds {} — the "
                    "model file is inconsistent; save it again",
                    offset, model.parameters.size()));
  add_int_attribute(add_node(g, "Softmax", {x}, options.output_name), "axis", 1);
  set_value_info(g.add_input(), options.input_name, "batch", int64_t(model.spec.input_features));
  set_value_info(g.add_output(), options.output_name, "batch", int64_t(width));

  std::string bytes;
  if (!m.SerializeToString(&bytes)) throw Error("ONNX export: protobuf could not serialise the model");
  return bytes;
}

void export_onnx(const SavedModel& model, const std::string& path, const OnnxExportOptions& options) {
  const std::string bytes = onnx_model_bytes(model, options);
  detail::write_file_atomically(path, std::vector<unsigned char>(bytes.begin(), bytes.end()));
}

}  // namespace anycl
