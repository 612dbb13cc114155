// `anycl bench predict`: inference as an application embedding anycl sees it — batch-1 latency
// (p50, p99) and batch throughput of the reference MLP and CNN through the C API (anycl.h), beside
// onnxruntime (CPU execution provider, default settings) running the same model's ONNX export in
// the same run (tools/onnxruntime_predict.py, embedded in the command).
#pragma once

namespace anycl::cli {

/// argv[1] is "bench", argv[2] "predict"; returns the exit code.
int run_bench_predict(int argc, char** argv);

}  // namespace anycl::cli
