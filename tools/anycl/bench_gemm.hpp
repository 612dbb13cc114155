// `anycl bench gemm`: CLBlast's SGEMM at the reference model's shapes and square sizes beside host
// CBLAS (OpenBLAS), with the Dense products also timed as training runs them on this device.
#pragma once

#include "anycl/runtime.hpp"
#include "bench_common.hpp"

namespace anycl::cli {

/// The table: each GEMM of the model (--model) and each square size, device beside host, with the
/// Dense products as trained where the device runs them otherwise.
Table bench_gemm(Runtime& rt, const BenchSettings& s);

}  // namespace anycl::cli
