// CLBlast 1.5's tuner constraints for the kernels anycl tunes (src/tuning/kernels/xgemm*.hpp in
// CLBlast), plus the value ranges its kernels assume (positive sizes, vector widths 1..16).
#include "blas/tuning/tuning_constraints.hpp"

#include <fmt/format.h>

#include <initializer_list>

namespace anycl::detail {
namespace {

using Params = std::map<std::string, size_t>;

// The value of `name`, or 0 when absent (absent parameters are CLBlast's to refuse).
size_t get(const Params& p, const char* name) {
  const auto it = p.find(name);
  return it == p.end() ? 0 : it->second;
}
bool has(const Params& p, std::initializer_list<const char*> names) {
  for (const char* n : names)
    if (!p.count(n)) return false;
  return true;
}

// x must be a multiple of y·z (z = 1 for a plain multiple).
std::string multiple(const Params& p, const char* x, const char* y, const char* z = nullptr) {
  if (!has(p, {x, y}) || (z && !p.count(z))) return "";
  const size_t d = get(p, y) * (z ? get(p, z) : 1);
  if (d != 0 && get(p, x) % d == 0) return "";
  return z ? fmt::format("{}={} is not a multiple of {}·{} = {}·{}", x, get(p, x), y, z, get(p, y), get(p, z))
           : fmt::format("{}={} is not a multiple of {}={}", x, get(p, x), y, get(p, y));
}

// x must be a multiple of (y·z)/w, a whole number.
std::string multiple_of_ratio(const Params& p, const char* x, const char* y, const char* z, const char* w) {
  if (!has(p, {x, y, z, w})) return "";
  const size_t w_value = get(p, w), num = get(p, y) * get(p, z);
  if (w_value == 0) return "";  // reported by ranges()
  const size_t ratio = num / w_value;
  if (num % w_value == 0 && ratio != 0 && get(p, x) % ratio == 0) return "";
  return fmt::format("{}={} is not a multiple of {}·{}/{} = {}·{}/{}", x, get(p, x), y, z, w, get(p, y),
                     get(p, z), w_value);
}

// Every violated constraint, so a message shows the whole inconsistency at once.
std::string all(std::initializer_list<std::string> checks) {
  std::string out;
  for (const std::string& c : checks)
    if (!c.empty()) out += (out.empty() ? "" : "; ") + c;
  return out;
}

// Sizes and widths must be positive, widths a power of two up to 16; flags 0 or 1.
std::string ranges(const Params& p, std::initializer_list<const char*> flags,
                   std::initializer_list<const char*> widths) {
  for (const auto& [name, value] : p) {
    bool is_flag = false, is_width = false;
    for (const char* f : flags) is_flag = is_flag || name == f;
    for (const char* w : widths) is_width = is_width || name == w;
    if (is_flag && value > 1) return fmt::format("{}={} must be 0 or 1", name, value);
    if (!is_flag && value == 0) return fmt::format("{}=0 must be positive", name);
    if (is_width && (value > 16 || (value & (value - 1)) != 0))
      return fmt::format("{}={} is not a vector width (1, 2, 4, 8 or 16)", name, value);
    if (!is_flag && value > (size_t{1} << 20) && name != "XGEMM_MIN_INDIRECT_SIZE")
      return fmt::format("{}={} is far larger than any work-group", name, value);
  }
  return "";
}

std::string xgemm_direct(const Params& p) {
  // CLBlast 1.5 names the tile WGD; later versions split it into MWGD, NWGD and KWGD.
  const char* m = p.count("WGD") ? "WGD" : "MWGD";
  const char* n = p.count("WGD") ? "WGD" : "NWGD";
  const char* k = p.count("WGD") ? "WGD" : "KWGD";
  return all({ranges(p, {"PADA", "PADB"}, {"VWMD", "VWND"}), multiple(p, k, "KWID"),
              multiple(p, m, "MDIMCD", "VWMD"), multiple(p, n, "NDIMCD", "VWND"),
              multiple(p, m, "MDIMAD", "VWMD"), multiple(p, n, "NDIMBD", "VWND"),
              multiple_of_ratio(p, k, "MDIMCD", "NDIMCD", "MDIMAD"),
              multiple_of_ratio(p, k, "MDIMCD", "NDIMCD", "NDIMBD")});
}

std::string xgemm(const Params& p) {
  std::string r = ranges(p, {"SA", "SB", "STRM", "STRN", "GEMMK"}, {"VWM", "VWN"});
  if (!r.empty()) return r;
  if (get(p, "GEMMK") == 1) {  // the 2D register-tiled kernel: its tuner's own constraints
    // CLBlast 1.5.3's routine pads m and n for GEMMK=1 without the swap that kernel needs, so every
    // result is wrong unless the tiles are square (fixed upstream in 1.6.3, pull request #543).
    if (has(p, {"MWG", "NWG"}) && get(p, "MWG") != get(p, "NWG"))
      return fmt::format("GEMMK=1 with MWG={} ≠ NWG={} (CLBlast 1.5.3's GEMM routine computes these wrongly)",
                         get(p, "MWG"), get(p, "NWG"));
    if (has(p, {"MWG", "MDIMC", "VWM"}) && get(p, "MWG") != get(p, "MDIMC") * get(p, "VWM"))
      return fmt::format("MWG={} must equal MDIMC·VWM = {}·{} when GEMMK=1", get(p, "MWG"), get(p, "MDIMC"),
                         get(p, "VWM"));
    if (has(p, {"NWG", "NDIMC", "VWN"}) && get(p, "NWG") != get(p, "NDIMC") * get(p, "VWN"))
      return fmt::format("NWG={} must equal NDIMC·VWN = {}·{} when GEMMK=1", get(p, "NWG"), get(p, "NDIMC"),
                         get(p, "VWN"));
    return all({multiple(p, "MWG", "MDIMA", "VWM"), multiple(p, "NWG", "NDIMB", "VWN")});
  }
  return all({multiple(p, "KWG", "KWI"), multiple(p, "MWG", "MDIMC", "VWM"),
              multiple(p, "NWG", "NDIMC", "VWN"), multiple(p, "MWG", "MDIMA", "VWM"),
              multiple(p, "NWG", "NDIMB", "VWN"), multiple_of_ratio(p, "KWG", "MDIMC", "NDIMC", "MDIMA"),
              multiple_of_ratio(p, "KWG", "MDIMC", "NDIMC", "NDIMB")});
}

}  // namespace

std::string tuning_constraint_violation(const GemmTuning& tuning) {
  for (const auto& [kernel, params] : tuning.kernels) {
    std::string wrong;
    if (kernel == "XgemmDirect") {
      wrong = xgemm_direct(params);
    } else if (kernel == "Xgemm") {
      wrong = xgemm(params);
    } else if (kernel == "GemmRoutine") {
      wrong = params.size() == 1 && get(params, "XGEMM_MIN_INDIRECT_SIZE") > 0
                  ? ""
                  : "holds other parameters than XGEMM_MIN_INDIRECT_SIZE (a positive size)";
    } else if (kernel == "anyclDense") {
      wrong = params.size() == 1 && params.count("TRANSPOSED_DX") && get(params, "TRANSPOSED_DX") <= 1
                  ? ""
                  : "holds other parameters than TRANSPOSED_DX (0 or 1)";
    } else if (kernel == "anyclConv") {
      const bool batched_ok = !params.count("BATCHED_DW") || get(params, "BATCHED_DW") <= 1;
      const bool slices_ok =
          !params.count("DW_SLICES") || (get(params, "DW_SLICES") >= 1 && get(params, "DW_SLICES") <= 1024);
      wrong = !params.empty() && params.size() == params.count("BATCHED_DW") + params.count("DW_SLICES") &&
                      batched_ok && slices_ok
                  ? ""
                  : "holds other parameters than BATCHED_DW (0 or 1) and DW_SLICES (1 to 1024)";
    } else if (kernel == "anyclConvDwXgemm" || kernel == "anyclDenseXgemm" ||
               kernel == "anyclConvWinogradXgemm") {  // none (the model's), or a set
      wrong = params.empty() ? "" : xgemm(params);
    } else {
      return fmt::format("unknown kernel '{}' (anycl tunes XgemmDirect, Xgemm and GemmRoutine)", kernel);
    }
    if (!wrong.empty()) return fmt::format("{}: {}", kernel, wrong);
  }
  return "";
}

}  // namespace anycl::detail
