// `anycl bench cnn`: the reference CNN's (Keras mnist_cnn) training samples/s through the real
// Trainer, and a per-layer forward/backward breakdown on the device beside the same layers on the
// host (im2col + OpenBLAS), with the Conv2D algorithms asked for (the default, im2col + GEMM, direct
// kernels, CLBlast Convgemm).
#pragma once

#include <string>
#include <vector>

#include "anycl/nn/conv2d.hpp"
#include "anycl/runtime.hpp"
#include "bench_table.hpp"

namespace anycl::cli {

/// Trainer throughput with each Conv2D algorithm of `forwards` in turn (the first one's is the profiled one)
/// over `limit` training samples (one warm-up epoch, then `repeats` timed ones), then per-layer times at
/// batch 128: each layer's forward and backward enqueued alone and waited for (a queue finish after each:
/// simple wall-clock timing, no OpenCL event profiling). With `breakdown` (a runtime created with profiling
/// on), the timed steps of the default algorithm's training, command by command, are appended there as a
/// table (and written to `trace_path` as a Chrome trace unless it is empty). `which` "bncnn": the BatchNorm
/// CNN (`anycl train --model bncnn`) instead, trained beside the same CNN without BatchNorm, with a row for
/// BatchNorm's step cost (the without ÷ with samples/s; `forwards`' first alone).
Table bench_cnn(Runtime& rt, const std::string& data_dir, size_t limit, int repeats,
                const std::vector<ConvForward>& forwards, std::vector<Table>* breakdown = nullptr,
                const std::string& trace_path = {}, const std::string& which = "cnn");

}  // namespace anycl::cli
