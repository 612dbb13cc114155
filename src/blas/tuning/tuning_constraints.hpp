// What CLBlast itself requires of the parameters it is given (the constraints its tuners state),
// checked before a stored tuning is applied: inconsistent parameters compile into kernels that
// compute wrong results without any error.
#pragma once

#include <string>

#include "anycl/blas/tuning.hpp"

namespace anycl::detail {

/// "" when every kernel of `tuning` is one anycl stores and its parameters meet CLBlast's stated
/// constraints; otherwise what is wrong, e.g. "XgemmDirect: WGD=32 is not a multiple of
/// MDIMAD·VWMD = 3·8".
std::string tuning_constraint_violation(const GemmTuning& tuning);

}  // namespace anycl::detail
