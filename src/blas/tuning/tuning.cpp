// CLBlast tuning: a model's GEMM shapes, applying parameters with OverrideParameters and checking
// them for exact results. The search is tune_gemm.cpp; the tuning file's text form tuning_file.cpp.
#include "anycl/blas/tuning.hpp"

#include "anycl/nn/model_from_flags.hpp"
#include "anycl/nn/sequential.hpp"

#include <clblast.h>
#include <fmt/format.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "anycl/blas/blas.hpp"
#include "anycl/error.hpp"
#include "blas/clblast_params.hpp"
#include "blas/clblast_params_lock.hpp"
#include "blas/gemm_plan.hpp"
#include "blas/tuning/switch_choice.hpp"
#include "blas/tuning/tuning_check.hpp"
#include "blas/tuning/tuning_constraints.hpp"

namespace anycl {
namespace {

constexpr const char* kRoutine = "GemmRoutine";
constexpr const char* kSwitch = "XGEMM_MIN_INDIRECT_SIZE";

void check(clblast::StatusCode status, const std::string& call, const std::string& where) {
  if (status != clblast::StatusCode::kSuccess) throw OpenCLError(int(status), call, where);
}

GemmTuning only(const std::string& kernel, std::map<std::string, size_t> params) {
  GemmTuning t;
  t.kernels[kernel] = std::move(params);
  return t;
}

}  // namespace

std::vector<GemmShape> model_gemm_shapes(const Sequential& model, size_t batch, Runtime* rt) {
  std::vector<GemmShape> forward, backward;
  Shape in = model.input_shape();
  std::vector<std::vector<GemmShape>> per_layer;
  for (size_t i = 0; i < model.layers().size(); ++i) {
    const Layer& layer = *model.layers()[i];
    auto g = layer.gemm_shapes(in, batch, /*need_dx=*/i > 0, rt);
    if (!g.empty()) per_layer.push_back(std::move(g));
    in = layer.output_shape(in);
  }
  for (size_t i = 0; i < per_layer.size(); ++i)
    for (GemmShape g : per_layer[i])
      if (g.label == "fwd") forward.push_back((g.label += " " + std::to_string(i + 1), g));
  for (size_t i = per_layer.size(); i-- > 0;)
    for (GemmShape g : per_layer[i])
      if (g.label != "fwd") backward.push_back((g.label += " " + std::to_string(i + 1), g));
  forward.insert(forward.end(), backward.begin(), backward.end());
  return forward;
}

std::vector<GemmShape> reference_model_gemm_shapes(size_t batch) {
  return model_gemm_shapes(Sequential(reference_mlp()), batch, nullptr);  // Dense's shapes need no device
}

void apply_tuning(Runtime& rt, const GemmTuning& t) {
  // Everything is checked before anything is applied, so a refused tuning leaves CLBlast as it was.
  if (const std::string wrong = detail::tuning_constraint_violation(t); !wrong.empty())
    throw ValidationError(
        fmt::format("CLBlast tuning refused: {} — CLBlast would compute wrong results with it", wrong));
  for (const auto& [name, params] : t.kernels) {
    if (detail::is_gemm_choice(name)) continue;
    std::map<std::string, size_t> expected;
    check(detail::clblast_params::retrieve(rt.info().id, name, expected), "clblast::RetrieveParameters",
          name);
    for (const auto& [key, value] : expected)
      if (!params.count(key))
        throw ValidationError(
            fmt::format("CLBlast tuning refused: {} lacks the parameter {} that CLBlast on {} needs", name,
                        key, rt.info().name));
    for (const auto& [key, value] : params)
      if (!expected.count(key))
        throw ValidationError(
            fmt::format("CLBlast tuning refused: {} has the parameter {}, which CLBlast on {} does "
                        "not know",
                        name, key, rt.info().name));
  }
  // Applied whole before another thread's CLBlast call reads any of it (clblast_params_lock.hpp).
  const detail::ClblastParamsChange change;
  for (const auto& [name, params] : t.kernels) {
    if (detail::is_gemm_choice(name)) {
      detail::apply_gemm_choice(rt, name, params);
      continue;
    }
    check(detail::clblast_params::override_parameters(rt.info().id, name, params),
          "clblast::OverrideParameters",
          fmt::format("kernel {} on {} — run `anycl tune --reset` and tune again", name, rt.info().name));
  }
  detail::forget_gemm_layout(rt);  // the GEMM planner asks CLBlast for the (maybe new) switch again
}

bool tuning_complete(const GemmTuning& t) {
  for (const char* stage : kTuningStages)
    if (!t.kernels.count(stage)) return false;
  return true;
}

namespace {

std::map<std::string, size_t> current_parameters(Runtime& rt, const std::string& kernel) {
  std::map<std::string, size_t> params;
  check(detail::clblast_params::retrieve(rt.info().id, kernel, params), "clblast::RetrieveParameters",
        kernel);
  return params;
}

// What is wrong when `kernel` runs with `params`, the GEMM routine forced onto it (`force_switch`),
// at `shapes` and some odd sizes; "" when every result is exact. CLBlast's parameters are left as
// they were.
std::string kernel_mismatch(Runtime& rt, const std::string& kernel,
                            const std::map<std::string, size_t>& params, size_t force_switch,
                            const std::vector<GemmShape>& shapes) {
  // Sets CLBlast is known to compute wrongly are refused before anything compiles.
  if (std::string wrong = detail::tuning_constraint_violation(only(kernel, params)); !wrong.empty())
    return wrong;
  const auto before = current_parameters(rt, kernel), routine = current_parameters(rt, kRoutine);
  apply_tuning(rt, only(kernel, params));
  apply_tuning(rt, only(kRoutine, {{kSwitch, force_switch}}));
  auto restore = [&] {
    apply_tuning(rt, only(kRoutine, routine));
    apply_tuning(rt, only(kernel, before));
  };
  std::string wrong;
  try {
    wrong = gemm_mismatch(rt, shapes);
  } catch (...) {  // it could not run (a build failure, say): not a verdict on the parameters
    restore();
    throw;
  }
  restore();
  return wrong;
}

}  // namespace

std::string tuning_mismatch(Runtime& rt, const GemmTuning& tuning, const std::vector<GemmShape>& shapes) {
  for (const auto& [kernel, force_switch] :
       {std::pair<const char*, size_t>{"XgemmDirect", detail::kAlwaysDirect},
        std::pair<const char*, size_t>{"Xgemm", 1}}) {
    const auto it = tuning.kernels.find(kernel);
    if (it == tuning.kernels.end()) continue;
    if (std::string wrong = kernel_mismatch(rt, kernel, it->second, force_switch, shapes); !wrong.empty())
      return fmt::format("{}: {}", kernel, wrong);
  }
  for (const auto& [line, set] : detail::product_xgemm_sets(tuning))  // each as Xgemm, forced
    if (std::string wrong = kernel_mismatch(rt, "Xgemm", set, 1, shapes); !wrong.empty())
      return fmt::format("{}, the Xgemm set of some products: {}", line, wrong);
  return "";
}

}  // namespace anycl
