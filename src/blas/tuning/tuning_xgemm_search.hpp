// anycl's own search over CLBlast's indirect Xgemm kernel, restricted to the parameter sets
// CLBlast 1.5.3's GEMM routine computes correctly (GEMMK=0), timed through the routine at the
// model's shapes. CLBlast's TuneXgemm cannot be restricted: it searches GEMMK=1 too, and with
// MWG ≠ NWG those compute wrong results through the 1.5.3 routine (fixed upstream in 1.6.3, #543).
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "anycl/blas/tuning.hpp"

namespace anycl::detail {

using XgemmParams = std::map<std::string, size_t>;

/// Every GEMMK=0 Xgemm parameter set of CLBlast's tuner space that meets its constraints and fits
/// the device (work-group size, local memory), in a fixed order.
std::vector<XgemmParams> xgemm_search_space(const DeviceInfo& device);

/// Times a `fraction` of that space (at least 8 sets, CLBlast's current parameters always among
/// them) through the GEMM routine forced onto the indirect kernel at `shapes`, and returns the
/// fastest set that computes exact results (gemm_mismatch). CLBlast's parameters are left as they
/// were. Throws Error when no set is exact.
XgemmParams search_xgemm(Runtime& rt, const std::vector<GemmShape>& shapes, double fraction,
                         const std::function<void(const std::string&)>& say);

}  // namespace anycl::detail
