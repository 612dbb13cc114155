// The window pooling layers' shared text forms, checks, geometry and ONNX node (pool_window.hpp).
#include "nn/pool_window.hpp"

#include <fmt/format.h>

#include <sstream>

#include "anycl/error.hpp"

namespace anycl::detail {
namespace {

// A window side or stride as written (at most three digits); 0 when it is not one.
size_t parse_count(const std::string& text) {
  if (text.empty() || text.size() > 3 || text.find_first_not_of("0123456789") != std::string::npos) return 0;
  return size_t(std::stoul(text));
}

}  // namespace

void check_pool_window(size_t size, size_t stride, const char* layer) {
  if (size < 1 || size > kMaxPoolWindow || stride < 1 || stride > kMaxPoolWindow)
    throw ValidationError(fmt::format("{} needs size and stride in [1, {}], got size {}, stride {}", layer,
                                      kMaxPoolWindow, size, stride));
}

PoolWindow parse_pool_args(const std::string& args, const char* name) {
  std::istringstream words(args);
  std::string size, stride, extra;
  if (!(words >> size >> stride) || (words >> extra))
    throw ValidationError(
        fmt::format("expected '{0} SIZE STRIDE' (e.g. {0} 2 2), got '{0} {1}'", name, args));
  return {parse_count(size), parse_count(stride)};
}

bool parse_pool_token(const std::string& token, const std::string& prefix, const char* what,
                      PoolWindow& out) {
  if (token.rfind(prefix, 0) != 0) return false;
  const std::string rest = token.substr(prefix.size());
  const size_t s = rest.find('s');
  out.size = parse_count(rest.substr(0, s));
  out.stride = s == std::string::npos ? out.size : parse_count(rest.substr(s + 1));
  if (out.size == 0 || out.stride == 0)
    throw ValidationError(
        fmt::format("{0} token is {1}SIZE[sSTRIDE] (e.g. {1}2, {1}3s2), got '{2}'", what, prefix, token));
  return true;
}

PoolGeometry pool_geometry(const Shape& input, size_t size, size_t stride, const char* keras_name) {
  if (input.size() != 3)
    throw ValidationError(
        fmt::format("{}({}×{}) needs image inputs (C, H, W), got {} — pool before Flatten/Dense, and give "
                    "the model an image input shape",
                    keras_name, size, size, shape_string(input)));
  PoolGeometry g;
  g.channels = input[0], g.height = input[1], g.width = input[2];
  g.size = size, g.stride = stride;
  if (g.height < size || g.width < size)
    throw ValidationError(
        fmt::format("{}({}×{}) cannot pool an input of {}: it would leave less than 1×1 — remove a pooling "
                    "layer or use a smaller window",
                    keras_name, size, size, shape_string(input)));
  g.out_h = (g.height - size) / stride + 1;
  g.out_w = (g.width - size) / stride + 1;
  shape_size(input);  // checked
  return g;
}

std::string pool_onnx(OnnxGraph& g, const char* op, const std::string& name, const std::string& x,
                      size_t size, size_t stride) {
  const auto side = int64_t(size), step = int64_t(stride);
  return g.node(op, {x}, name, {}, {{"kernel_shape", {side, side}}, {"strides", {step, step}}});
}

}  // namespace anycl::detail
