// Parameter spaces and neighbours for the local tuning search (see the header). The value lists
// follow CLBlast 1.5's tuners (src/tuning/kernels/xgemm*.hpp), widened where a CPU needs it
// (vector widths up to 16, KWID 4).
#include "blas/tuning/parameter_space.hpp"

#include <algorithm>

#include "anycl/blas/tuning.hpp"
#include "blas/tuning/tuning_constraints.hpp"

namespace anycl::detail {
namespace {

size_t value(const Params& p, const char* name) {
  const auto it = p.find(name);
  return it == p.end() ? 0 : it->second;
}

// Local memory a set asks for, in floats (the tiles of A and B the work-group caches).
size_t local_floats(const std::string& kernel, const Params& p) {
  if (kernel == "XgemmDirect") {
    const size_t wgd = value(p, "WGD");
    return wgd * (wgd + value(p, "PADA")) + wgd * (wgd + value(p, "PADB"));
  }
  return (value(p, "SA") ? value(p, "KWG") * value(p, "MWG") : 0) +
         (value(p, "SB") ? value(p, "KWG") * value(p, "NWG") : 0);
}

size_t threads(const std::string& kernel, const Params& p) {
  return kernel == "XgemmDirect" ? value(p, "MDIMCD") * value(p, "NDIMCD")
                                 : value(p, "MDIMC") * value(p, "NDIMC");
}

// `p` with `name` moved `step` (−1 or +1) along its value list; false when it cannot move.
bool move(const ParameterSpace& space, Params& p, const std::string& name, int step) {
  for (const auto& [param, values] : space.values) {
    if (param != name) continue;
    const auto it = p.find(name);
    if (it == p.end()) return false;
    const auto at = std::find(values.begin(), values.end(), it->second);
    if (at == values.end()) return false;
    const long next = long(at - values.begin()) + step;
    if (next < 0 || next >= long(values.size())) return false;
    it->second = values[size_t(next)];
    return true;
  }
  return false;
}

}  // namespace

const ParameterSpace& direct_space() {
  static const ParameterSpace space{
      "XgemmDirect",
      {{"WGD", {8, 16, 32, 64, 128}},
       {"MDIMCD", {8, 16, 32}},
       {"NDIMCD", {8, 16, 32}},
       {"MDIMAD", {8, 16, 32}},
       {"NDIMBD", {8, 16, 32}},
       {"KWID", {2, 4, 8, 16}},
       {"VWMD", {1, 2, 4, 8, 16}},
       {"VWND", {1, 2, 4, 8, 16}},
       {"PADA", {0, 1}},
       {"PADB", {0, 1}}},
      {{"MDIMCD", "MDIMAD"}, {"NDIMCD", "NDIMBD"}, {"MDIMCD", "NDIMCD"}, {"VWMD", "VWND"}}};
  return space;
}

const ParameterSpace& indirect_space() {
  static const ParameterSpace space{"Xgemm",
                                    {{"MWG", {16, 32, 64, 128}},
                                     {"NWG", {16, 32, 64, 128}},
                                     {"KWG", {8, 16, 32}},
                                     {"MDIMC", {8, 16, 32}},
                                     {"NDIMC", {8, 16, 32}},
                                     {"MDIMA", {8, 16, 32}},
                                     {"NDIMB", {8, 16, 32}},
                                     {"VWM", {1, 2, 4, 8}},
                                     {"VWN", {1, 2, 4, 8}},
                                     {"STRM", {0, 1}},
                                     {"STRN", {0, 1}},
                                     {"SA", {0, 1}},
                                     {"SB", {0, 1}}},
                                    {{"MDIMC", "MDIMA"}, {"NDIMC", "NDIMB"}, {"MWG", "NWG"}, {"VWM", "VWN"}}};
  return space;
}

const ParameterSpace* space_of(const std::string& kernel) {
  if (kernel == "XgemmDirect") return &direct_space();
  if (kernel == "Xgemm") return &indirect_space();
  return nullptr;
}

bool fits(const ParameterSpace& space, const Params& p, const DeviceInfo& device) {
  GemmTuning t;
  t.kernels[space.kernel] = p;
  if (!tuning_constraint_violation(t).empty()) return false;
  if (threads(space.kernel, p) > device.max_work_group_size) return false;
  return local_floats(space.kernel, p) * sizeof(float) <= device.local_mem_bytes;
}

std::vector<Params> neighbours(const ParameterSpace& space, const Params& p, const DeviceInfo& device) {
  std::vector<Params> out;
  auto keep = [&](const Params& q) {
    if (q != p && fits(space, q, device) && std::find(out.begin(), out.end(), q) == out.end())
      out.push_back(q);
  };
  for (int step : {-1, 1}) {
    for (const auto& entry : space.values) {
      Params q = p;
      if (move(space, q, entry.first, step)) keep(q);
    }
    for (const auto& [x, y] : space.tied) {
      Params q = p;
      if (move(space, q, x, step) && move(space, q, y, step)) keep(q);
    }
  }
  return out;
}

}  // namespace anycl::detail
