// Timing GEMMs through CLBlast's routine at a model's shapes, shared by every tuning search: one
// set of device buffers large enough for each shape, and the median of a few timed passes.
#pragma once

#include <vector>

#include "anycl/blas/tuning.hpp"
#include "anycl/device_buffer.hpp"

namespace anycl::detail {

/// Device buffers A, B and C large enough for every GEMM in `shapes` (contents left undefined:
/// timing does not depend on them).
struct ShapeBuffers {
  ShapeBuffers(Runtime& rt, const std::vector<GemmShape>& shapes);
  DeviceBuffer a, b, c;
};

/// Seconds per GEMM of each shape with CLBlast's current parameters: after one untimed pass (which
/// compiles), the median of `repeats` timings of each shape on its own.
std::vector<double> time_each_shape(Runtime& rt, const std::vector<GemmShape>& shapes, ShapeBuffers& buffers,
                                    int repeats = 3);

/// Seconds of the transposes a Dense layer runs before `shape` where the indirect kernel reads A
/// transposed (GemmShape::transposes_a): xᵀ before the forward; dzᵀ and Wᵀ before dx (an NT shape).
/// The median of `repeats`; 0 for any other shape.
double dense_transposes_seconds(Runtime& rt, const GemmShape& shape, int repeats = 5);

/// Seconds for one pass over every shape: the sum of time_each_shape.
double time_shapes(Runtime& rt, const std::vector<GemmShape>& shapes, ShapeBuffers& buffers, int repeats = 3);

/// Seconds for one pass over every shape as training runs it with the parameters applied now (the
/// GEMM planner's rules): a Dense product on an indirect kernel that reads A transposed as anycl's
/// transposes plus a GEMM TN, a dense dx the tuning lays out as Wᵀ plus a GEMM NN so, any other
/// shape through gemm() as it is; each shape `count` times. After one untimed pass (which compiles
/// what the parameters need), the medians of `repeats` timings. `buffers` as for `shapes`.
double pass_seconds_as_trained(Runtime& rt, const std::vector<GemmShape>& shapes, ShapeBuffers& buffers,
                               int repeats = 3);

}  // namespace anycl::detail
