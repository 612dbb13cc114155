// Preparing a model's GEMMs on a runtime, which building the model does (Sequential::build): the
// tuning database's sets for its GEMMs (a CNN's `large` sets), then CLBlast's programs kept for
// them, so that training, evaluation and prediction run the same parameters and programs.
#pragma once

#include <cstddef>

namespace anycl {
class Runtime;
class Sequential;
}  // namespace anycl

namespace anycl::detail {

/// The fewest rows a model's GEMMs are prepared at: the batch `anycl train` and `anycl tune` default
/// to, so that a model built for prediction of a few rows gets the sets its training got.
inline constexpr size_t kPrepareBatch = 128;

/// Prepares `model`'s GEMMs on `rt` for batches of up to `max_batch` rows (at least kPrepareBatch),
/// before its layers are built: apply_model_tuning with its GEMM shapes, then
/// restore_clblast_programs. Changes nothing where `rt` runs a tuning file of its own or no tuning.
void prepare_model_gemms(Runtime& rt, const Sequential& model, size_t max_batch);

}  // namespace anycl::detail
