// SavedModel → onnx::ModelProto through the protobuf classes generated from onnx.proto.
// Weights keep anycl's layout: W is (in, out) row-major, so Gemm needs no transpose.
#include "anycl/export/onnx.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "anycl/error.hpp"
#include "anycl/nn/registry.hpp"
#include "anycl/nn/sequential.hpp"
#include "onnx.pb.h"
#include "train/atomic_file.hpp"

namespace anycl {
namespace {

void set_value_info(onnx::ValueInfoProto* v, const std::string& name, const std::string& batch,
                    int64_t width) {
  v->set_name(name);
  onnx::TypeProto_Tensor* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto::FLOAT);
  t->mutable_shape()->add_dim()->set_dim_param(batch);
  t->mutable_shape()->add_dim()->set_dim_value(width);
}

// The registry's view of an ONNX graph: layer types emit initializers and nodes through it.
class ProtoGraph final : public OnnxGraph {
 public:
  explicit ProtoGraph(onnx::GraphProto& g) : g_(g) {}
  std::string initializer(const std::string& name, const std::vector<int64_t>& dims,
                          const float* data) override {
    onnx::TensorProto* t = g_.add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    size_t n = 1;
    for (int64_t d : dims) t->add_dims(d), n *= size_t(d);
    t->mutable_float_data()->Add(data, data + n);
    return name;
  }
  std::string int64_initializer(const std::string& name, const std::vector<int64_t>& values) override {
    onnx::TensorProto* t = g_.add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(int64_t(values.size()));
    t->mutable_int64_data()->Add(values.begin(), values.end());
    return name;
  }
  std::string node(const std::string& op, const std::vector<std::string>& inputs, const std::string& output,
                   const std::vector<std::pair<std::string, int64_t>>& int_attributes = {},
                   const std::vector<std::pair<std::string, std::vector<int64_t>>>& list_attributes = {},
                   const std::vector<std::pair<std::string, float>>& float_attributes = {}) override {
    onnx::NodeProto* n = g_.add_node();
    n->set_op_type(op);
    n->set_name(output);
    for (const auto& in : inputs) n->add_input(in);
    n->add_output(output);
    for (const auto& [name, value] : int_attributes) {
      onnx::AttributeProto* a = n->add_attribute();
      a->set_name(name);
      a->set_type(onnx::AttributeProto::INT);
      a->set_i(value);
    }
    for (const auto& [name, values] : list_attributes) {
      onnx::AttributeProto* a = n->add_attribute();
      a->set_name(name);
      a->set_type(onnx::AttributeProto::INTS);
      for (int64_t v : values) a->add_ints(v);
    }
    for (const auto& [name, value] : float_attributes) {
      onnx::AttributeProto* a = n->add_attribute();
      a->set_name(name);
      a->set_type(onnx::AttributeProto::FLOAT);
      a->set_f(value);
    }
    return output;
  }

 private:
  onnx::GraphProto& g_;
};

}  // namespace

std::string onnx_model_bytes(const SavedModel& model, const OnnxExportOptions& options) {
  onnx::ModelProto m;
  m.set_ir_version(8);  // IR 8 (ONNX 1.10+), which every opset-13 reader accepts
  m.set_producer_name("anycl");
  m.set_producer_version(ANYCL_VERSION);
  m.set_doc_string(model.spec.loss == "softmax_cross_entropy"
                       ? "model trained with anycl; input: pixels / 255, output: class probabilities"
                   : model.spec.loss == "binary_crossentropy"
                       ? "model trained with anycl (loss binary_crossentropy); output: the probability of "
                         "each output (sigmoid)"
                       : "model trained with anycl (loss " + model.spec.loss +
                             "); output: the model's raw outputs");
  onnx::OperatorSetIdProto* opset = m.add_opset_import();
  opset->set_domain("");
  opset->set_version(kOnnxOpset);
  onnx::GraphProto& g = *m.mutable_graph();
  g.set_name(options.graph_name);

  ProtoGraph graph(g);
  std::string x = options.input_name;
  size_t offset = 0, with_parameters = 0, width = 0, state_offset = 0;
  std::map<std::string, size_t> per_type;  // dense0, dense1, … as before the registry
  try {
    const Sequential layout(model.spec);  // checked shapes and parameter counts
    state_offset = layout.parameter_count();
    Shape in = layout.input_shape();
    if (in.size() > 1) {  // the input stays (batch, features); the image layers see (batch, C, H, W)
      std::vector<int64_t> dims{-1};
      for (size_t d : in) dims.push_back(int64_t(d));
      x = graph.node("Reshape", {x, graph.int64_initializer("input_shape", dims)}, "image");
    }
    for (const auto& layer : layout.layers()) {
      const size_t count = layer->parameter_count(in);
      if (count > model.parameters.size() - std::min(offset, model.parameters.size()))
        throw ValidationError(fmt::format(
            "ONNX export: layer '{}' needs {} parameters beyond offset {}, the model has {} — the model file "
            "is inconsistent; save it again",
            layer->spec().text(), count, offset, model.parameters.size()));
      // A layer with state (BatchNormalization's moving statistics, stored after every layer's
      // parameters) sees its parameters followed by its state.
      const size_t state = layer->state_count(in);
      const float* params = model.parameters.data() + offset;
      std::vector<float> with_state;
      if (state > 0) {
        if (state_offset + state > model.parameters.size())
          throw ValidationError(fmt::format(
              "ONNX export: layer '{}' needs {} state values beyond offset {}, the model has {} — the model "
              "file is inconsistent; save it again",
              layer->spec().text(), state, state_offset, model.parameters.size()));
        with_state.assign(params, params + count);
        with_state.insert(with_state.end(), model.parameters.begin() + long(state_offset),
                          model.parameters.begin() + long(state_offset + state));
        params = with_state.data();
        state_offset += state;
      }
      x = layer->type().to_onnx(*layer, graph, x, in, params, per_type[layer->type().name]++);
      offset += count;
      with_parameters += count > 0;
      in = layer->output_shape(in);
    }
    width = shape_size(in);
  } catch (const DataError&) {
    throw;
  } catch (const ValidationError& e) {
    if (std::string(e.what()).rfind("ONNX export", 0) == 0) throw;
    throw ValidationError(
        fmt::format("ONNX export: {} — the model file is inconsistent; save it again", e.what()));
  }
  if (with_parameters == 0)
    throw ValidationError("ONNX export: the model has no dense layer — nothing to export");
  if (state_offset != model.parameters.size())
    throw ValidationError(
        fmt::format("ONNX export: the architecture uses {} parameters, the model holds {} — the "
                    "model file is inconsistent; save it again",
                    state_offset, model.parameters.size()));
  if (model.spec.loss == "softmax_cross_entropy")
    graph.node("Softmax", {x}, options.output_name, {{"axis", 1}});
  else if (model.spec.loss == "binary_crossentropy")  // each output its own class: anycl's predictions
    graph.node("Sigmoid", {x}, options.output_name);
  else
    graph.node("Identity", {x}, options.output_name);
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
