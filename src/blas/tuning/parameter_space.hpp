// The parameter spaces of the two CLBlast GEMM kernels anycl tunes (XgemmDirect, Xgemm with
// GEMMK=0), as value lists per parameter, and the neighbours of a set: the moves a local search
// takes from the best set found so far instead of sampling the whole space blindly.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "anycl/device.hpp"

namespace anycl::detail {

using Params = std::map<std::string, size_t>;

/// One kernel's tunable parameters: each with its values in ascending order, and the pairs of
/// parameters CLBlast's constraints tie together (a neighbour may move both a step at once).
struct ParameterSpace {
  std::string kernel;
  std::vector<std::pair<std::string, std::vector<size_t>>> values;
  std::vector<std::pair<std::string, std::string>> tied;
};

/// XgemmDirect (CLBlast 1.5: WGD, MDIMCD, NDIMCD, MDIMAD, NDIMBD, KWID, VWMD, VWND, PADA, PADB).
const ParameterSpace& direct_space();
/// Xgemm restricted to GEMMK=0, KREG=1 (the sets CLBlast 1.5.3's routine computes correctly).
const ParameterSpace& indirect_space();
/// The space of "XgemmDirect" or "Xgemm"; nullptr for any other kernel name.
const ParameterSpace* space_of(const std::string& kernel);

/// True when `p` meets CLBlast's constraints and fits `device` (work-group size, local memory).
bool fits(const ParameterSpace& space, const Params& p, const DeviceInfo& device);

/// The sets one step from `p` that fit: each parameter moved to the next value down or up, and each
/// tied pair moved a step together in the same direction. A parameter `p` lacks (or holds at a
/// value outside its list) is not moved.
std::vector<Params> neighbours(const ParameterSpace& space, const Params& p, const DeviceInfo& device);

}  // namespace anycl::detail
