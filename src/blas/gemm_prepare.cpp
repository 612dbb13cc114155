// A model's GEMMs prepared when it is built on a runtime (gemm_prepare.hpp).
#include "blas/gemm_prepare.hpp"

#include <algorithm>

#include "anycl/blas/tuning.hpp"
#include "anycl/nn/sequential.hpp"
#include "blas/clblast_program_store.hpp"

namespace anycl::detail {

void prepare_model_gemms(Runtime& rt, const Sequential& model, size_t max_batch) {
  // The tuning database's sets for this model's GEMMs (a CNN's differ from an MLP's), before any
  // compiles; then CLBlast's programs kept for those sets by an earlier process.
  apply_model_tuning(rt, model_gemm_shapes(model, std::max(max_batch, kPrepareBatch), &rt));
  restore_clblast_programs(rt);
}

}  // namespace anycl::detail
