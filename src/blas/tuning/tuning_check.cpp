// The start-up check of a stored tuning (see the header). The verdict is a kernel-cache entry
// ("tuning_check-<hash>.bin"), so it is atomic, checksummed and cleared with the compiled kernels.
//
// The check runs the GEMM routine as the tuning sets it up, each shape on the kernel its switch
// sends it to, not each kernel forced (tuning_mismatch, what `anycl tune` and `anycl doctor` do):
// the switch is compiled into CLBlast's GEMM program, so every forced switch is one more program,
// and on PoCL each costs over a minute cold (its direct kernels, 15-19 s each, are compiled once
// for any work-group size and again for the one launched). Checked this way a cold start compiles
// the program training runs and nothing else.
#include "blas/tuning/tuning_check.hpp"

#include <clblast.h>
#include <fmt/format.h>

#include <map>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "anycl/error.hpp"
#include "blas/clblast_params.hpp"
#include "blas/gemm_plan.hpp"
#include "hash.hpp"
#include "runtime/disk_cache.hpp"

namespace anycl::detail {
namespace {

constexpr const char* kExact = "exact GEMM results";

std::string verdict_key(const Runtime& rt, const GemmTuning& t) {
  uint64_t h = device_hash(rt.info());
  for (const auto& [kernel, params] : t.kernels) {
    h = fnv1a(kernel, h);
    for (const auto& [key, value] : params) h = fnv1a(fmt::format("{}={}", key, value), h);
  }
  return fmt::format("tuning_check-{:016x}", h);
}

// CLBlast's current parameters for the kernels of `t` that CLBlast owns.
GemmTuning current(Runtime& rt, const GemmTuning& t) {
  GemmTuning before;
  for (const auto& [kernel, params] : t.kernels) {
    // anycl's own choices (anyclDense, anyclConv): CLBlast has no such kernel, and asking it for one
    // prints "CLBlast: Run-time error: -2041" (no database entry).
    if (kernel.rfind("anycl", 0) == 0) continue;
    std::map<std::string, size_t> now;
    if (clblast_params::retrieve(rt.info().id, kernel, now) == clblast::StatusCode::kSuccess)
      before.kernels[kernel] = now;
  }
  return before;
}

// What is wrong when CLBlast's GEMM routine runs as it is set now, at `shapes` and odd sizes on
// both sides of the switch; "" when every result is exact. A switch past what a host loop checks at
// start-up (odd_shapes_over) can leave the indirect kernel unexercised by the model's shapes: then
// the tuning's Xgemm set is checked with the routine forced onto it (one more GEMM program; the
// NVIDIA Hopper entry's switch is 1024).
std::string routine_mismatch(Runtime& rt, const GemmTuning& tuning, const std::vector<GemmShape>& shapes) {
  std::vector<GemmShape> all = shapes;
  std::map<std::string, size_t> routine;
  size_t min_indirect = 0;
  if (clblast_params::retrieve(rt.info().id, "GemmRoutine", routine) == clblast::StatusCode::kSuccess &&
      routine.count("XGEMM_MIN_INDIRECT_SIZE")) {
    min_indirect = routine.at("XGEMM_MIN_INDIRECT_SIZE");
    for (auto& s : odd_shapes_over(min_indirect)) all.push_back(std::move(s));
  }
  if (std::string wrong = gemm_mismatch(rt, all); !wrong.empty()) return wrong;
  // Past the odd sizes' reach, the indirect kernel is forced (one more program per set).
  const bool forced = odd_shapes_over(min_indirect).empty() && min_indirect > 1;
  const auto xgemm = tuning.kernels.find("Xgemm");
  if (xgemm != tuning.kernels.end() && forced) {
    GemmTuning indirect;
    indirect.kernels.insert(*xgemm);
    if (std::string wrong = tuning_mismatch(rt, indirect, shapes); !wrong.empty()) return wrong;
  }
  for (const auto& [line, set] : product_xgemm_sets(tuning)) {
    std::string wrong;
    if (forced) {
      GemmTuning indirect;
      indirect.kernels["Xgemm"] = set;
      wrong = tuning_mismatch(rt, indirect, shapes);
    } else {
      const XgemmSetScope scope(rt, set);
      wrong = gemm_mismatch(rt, odd_shapes_over(min_indirect));
    }
    if (!wrong.empty()) return fmt::format("{}, the Xgemm set of some products: {}", line, wrong);
  }
  return "";
}

}  // namespace

std::vector<std::pair<std::string, std::map<std::string, size_t>>> product_xgemm_sets(
    const GemmTuning& tuning) {
  const auto xgemm = tuning.kernels.find("Xgemm");
  std::vector<std::pair<std::string, std::map<std::string, size_t>>> sets;
  for (const char* line : {kConvDwXgemm, kDenseXgemm, kConvWinogradXgemm}) {
    const auto it = tuning.kernels.find(line);
    if (it == tuning.kernels.end() || it->second.empty()) continue;
    if (xgemm != tuning.kernels.end() && it->second == xgemm->second) continue;
    sets.emplace_back(line, it->second);
  }
  return sets;
}

std::vector<GemmShape> odd_shapes_over(size_t min_indirect) {
  if (min_indirect <= 1 || min_indirect > 512) return {};
  const size_t o = min_indirect | 1;  // odd and ≥ the switch, so o·(o+2)·(o+4) ≥ its cube
  std::vector<GemmShape> shapes;
  for (bool ta : {false, true})
    for (bool tb : {false, true}) shapes.push_back({"odd", ta, tb, o + 2, o, o + 4});
  return shapes;
}

void remember_exact_tuning(const Runtime& rt, const GemmTuning& tuning, const DiskCache& cache) {
  cache.put(verdict_key(rt, tuning),
            std::vector<unsigned char>(kExact, kExact + std::char_traits<char>::length(kExact)));
}

void apply_checked_tuning(Runtime& rt, const GemmTuning& tuning, const DiskCache* cache) {
  const GemmTuning before = current(rt, tuning);
  apply_tuning(rt, tuning);
  const std::string key = verdict_key(rt, tuning);
  if (cache) {
    const auto verdict = cache->get(key);
    const std::string said = verdict ? std::string(verdict->begin(), verdict->end()) : "";
    if (said == kExact) return;
    if (!said.empty()) {  // refused before on this device and driver: refuse again without re-checking
      apply_tuning(rt, before);
      throw ValidationError(
          fmt::format("CLBlast tuning refused: it computed wrong results on {} ({})", rt.info().name, said));
    }
  }
  std::string wrong;
  try {
    wrong = routine_mismatch(rt, tuning, reference_model_gemm_shapes());
  } catch (const Error& e) {
    // The check could not run (e.g. PoCL could not write its kernel cache): no verdict is kept, so
    // the tuning is checked again at the next start instead of staying refused once that is fixed.
    apply_tuning(rt, before);
    throw ValidationError(fmt::format(
        "CLBlast tuning not applied on {}: its exact check could not run ({}); it is checked again at the "
        "next start",
        rt.info().name, e.what()));
  }
  if (wrong.empty()) {
    if (cache) remember_exact_tuning(rt, tuning, *cache);
    return;
  }
  if (cache) cache->put(key, std::vector<unsigned char>(wrong.begin(), wrong.end()));
  apply_tuning(rt, before);
  throw ValidationError(
      fmt::format("CLBlast tuning refused: it computes wrong results on {} ({})", rt.info().name, wrong));
}

}  // namespace anycl::detail
