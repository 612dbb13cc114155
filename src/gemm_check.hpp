// An exactness check of GEMM on a device: small-integer inputs make every product and sum exact in
// float, so the device must match a host loop bit for bit. `anycl tune` uses it to refuse CLBlast
// parameters that compute wrong results.
#pragma once

#include <string>
#include <vector>

#include "anycl/runtime.hpp"
#include "anycl/tuning.hpp"

namespace anycl::detail {

/// Runs GEMM at `shapes` and at small odd sizes in all four transposes; "" when every result
/// matches the host exactly, else the first mismatch (shape, count, a wrong element).
std::string gemm_mismatch(Runtime& rt, const std::vector<GemmShape>& shapes);

}  // namespace anycl::detail
