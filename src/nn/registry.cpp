// The layer registry: the one list of layer types. Adding a layer type is one line here (its
// LayerType lives beside the layer in src/nn/<layer>.cpp).
#include "anycl/nn/registry.hpp"

#include <fmt/format.h>

#include <sstream>

#include "anycl/blas/tuning.hpp"
#include "anycl/error.hpp"
#include "anycl/nn/avgpool2d.hpp"
#include "anycl/nn/batchnorm.hpp"
#include "anycl/nn/conv2d.hpp"
#include "anycl/nn/dense.hpp"
#include "anycl/nn/dropout.hpp"
#include "anycl/nn/flatten.hpp"
#include "anycl/nn/global_pool2d.hpp"
#include "anycl/nn/maxpool2d.hpp"

namespace anycl {

const std::vector<const LayerType*>& layer_types() {
  static const std::vector<const LayerType*> types{
      &dense_layer_type(),     &dropout_layer_type(),         &conv2d_layer_type(),
      &maxpool2d_layer_type(), &flatten_layer_type(),         &batchnorm_layer_type(),
      &avgpool2d_layer_type(), &globalavgpool2d_layer_type(), &globalmaxpool2d_layer_type(),
  };
  return types;
}

const LayerType& layer_type(const std::string& name) {
  std::vector<std::string> names;
  for (const LayerType* t : layer_types()) {
    if (name == t->name) return *t;
    names.emplace_back(t->name);
  }
  throw ValidationError(fmt::format("unknown layer type '{}' (known: {})", name, fmt::join(names, ", ")));
}

std::unique_ptr<Layer> make_layer(const LayerSpec& spec) { return layer_type(spec.type).parse(spec.args); }

LayerSpec Layer::spec() const { return {type().name, args()}; }

std::string Layer::kind() const { return type().summary_name; }

std::vector<GemmShape> Layer::gemm_shapes(const Shape&, size_t, bool, Runtime*) const { return {}; }

}  // namespace anycl
