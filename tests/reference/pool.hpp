// Plain-loop average pooling (valid windows) and global average / max pooling over NCHW
// (cl_kernels/pool.cl), each backward written from its definition (a scatter per output, where the
// kernels gather per input pixel). Templated: float mirrors the device, double serves finite differences.
#pragma once

#include <anycl/nn/geometry.hpp>

#include <cstddef>
#include <vector>

namespace anycl::reference {

/// y:(rows, C, OH, OW) = the mean of each size×size window of x:(rows, C, H, W).
template <typename T>
std::vector<T> avgpool_forward(const PoolGeometry& g, const std::vector<T>& x, size_t rows) {
  const size_t planes = rows * g.channels, hw = g.height * g.width, out = g.out_h * g.out_w;
  std::vector<T> y(planes * out);
  for (size_t pl = 0; pl < planes; ++pl)
    for (size_t oy = 0; oy < g.out_h; ++oy)
      for (size_t ox = 0; ox < g.out_w; ++ox) {
        T sum = T(0);
        for (size_t a = 0; a < g.size; ++a)
          for (size_t c = 0; c < g.size; ++c)
            sum += x[pl * hw + (oy * g.stride + a) * g.width + ox * g.stride + c];
        y[pl * out + oy * g.out_w + ox] = sum / T(g.size * g.size);
      }
  return y;
}

/// dx: each output's dy / size² added to every pixel of its window.
inline std::vector<float> avgpool_backward(const PoolGeometry& g, const std::vector<float>& dy, size_t rows) {
  const size_t planes = rows * g.channels, hw = g.height * g.width, out = g.out_h * g.out_w;
  std::vector<double> dx(planes * hw, 0.0);
  for (size_t pl = 0; pl < planes; ++pl)
    for (size_t oy = 0; oy < g.out_h; ++oy)
      for (size_t ox = 0; ox < g.out_w; ++ox)
        for (size_t a = 0; a < g.size; ++a)
          for (size_t c = 0; c < g.size; ++c)
            dx[pl * hw + (oy * g.stride + a) * g.width + ox * g.stride + c] +=
                double(dy[pl * out + oy * g.out_w + ox]) / double(g.size * g.size);
  return std::vector<float>(dx.begin(), dx.end());
}

/// y:(planes) = the mean (max = false) or the maximum of each plane of `plane_size` values; arg:
/// the maximum's index in its plane (the first on ties).
template <typename T>
std::vector<T> global_pool_forward(bool max, const std::vector<T>& x, size_t planes, size_t plane_size,
                                   std::vector<size_t>* arg = nullptr) {
  std::vector<T> y(planes);
  if (arg) arg->assign(planes, 0);
  for (size_t pl = 0; pl < planes; ++pl) {
    const T* in = x.data() + pl * plane_size;
    if (!max) {
      T sum = T(0);
      for (size_t p = 0; p < plane_size; ++p) sum += in[p];
      y[pl] = sum / T(plane_size);
      continue;
    }
    size_t best = 0;
    for (size_t p = 1; p < plane_size; ++p)
      if (in[p] > in[best]) best = p;
    y[pl] = in[best];
    if (arg) (*arg)[pl] = best;
  }
  return y;
}

/// dx: dy / plane_size over the whole plane (mean), or dy at the plane's maximum (max).
inline std::vector<float> global_pool_backward(bool max, const std::vector<float>& x,
                                               const std::vector<float>& dy, size_t plane_size) {
  const size_t planes = dy.size();
  std::vector<size_t> arg;
  global_pool_forward(max, x, planes, plane_size, &arg);
  std::vector<float> dx(planes * plane_size, 0.f);
  for (size_t pl = 0; pl < planes; ++pl)
    for (size_t p = 0; p < plane_size; ++p)
      if (!max)
        dx[pl * plane_size + p] = float(double(dy[pl]) / double(plane_size));
      else if (p == arg[pl])
        dx[pl * plane_size + p] = dy[pl];
  return dx;
}

}  // namespace anycl::reference
