// Plain-loop references for the image layers (Conv2D, MaxPool2D, Flatten) over NCHW: direct
// six-deep loops, no im2col, so they check the device's im2col/GEMM/col2im path independently.
#pragma once

#include <anycl/nn/conv2d.hpp>
#include <anycl/nn/maxpool2d.hpp>

#include <vector>

#include "reference/activation.hpp"
#include "reference/init.hpp"

namespace anycl::reference {

/// y:(rows, F, OH, OW) = act(W ⊛ x + b) for x:(rows, C, H, W); W:(F, C, K, K) then b:(F).
/// Templated: float mirrors the device, double serves finite differences.
template <typename T>
std::vector<T> conv2d_forward(const ConvGeometry& g, size_t filters, Activation act, const T* p,
                              const std::vector<T>& x, size_t rows) {
  const size_t k = g.kernel, hw = g.height * g.width, plane = g.plane();
  const T* b = p + filters * g.patch();
  std::vector<T> y(rows * filters * plane);
  for (size_t r = 0; r < rows; ++r)
    for (size_t f = 0; f < filters; ++f)
      for (size_t oy = 0; oy < g.out_h; ++oy)
        for (size_t ox = 0; ox < g.out_w; ++ox) {
          double sum = 0;
          for (size_t c = 0; c < g.channels; ++c)
            for (size_t i = 0; i < k; ++i)
              for (size_t j = 0; j < k; ++j) {
                const long yy = long(oy * g.stride + i) - long(g.pad_top);
                const long xx = long(ox * g.stride + j) - long(g.pad_left);
                if (yy < 0 || xx < 0 || yy >= long(g.height) || xx >= long(g.width)) continue;
                sum += double(p[((f * g.channels + c) * k + i) * k + j]) *
                       x[(r * g.channels + c) * hw + size_t(yy) * g.width + size_t(xx)];
              }
          y[(r * filters + f) * plane + oy * g.out_w + ox] = activate(T(sum) + b[f], act);
        }
  return y;
}

/// dy → dz = dy·act'(z), z the activation's input (formed again from p and x; `y` is not needed);
/// dW, db into g; returns dx. Same layouts as conv2d_forward.
inline std::vector<float> conv2d_backward(const ConvGeometry& g, size_t filters, Activation act,
                                          const float* p, const std::vector<float>& x,
                                          const std::vector<float>& /*y*/, std::vector<float> dy, size_t rows,
                                          float* grads) {
  const size_t k = g.kernel, hw = g.height * g.width, plane = g.plane();
  const std::vector<float> z = conv2d_forward(g, filters, Activation::linear, p, x, rows);
  for (size_t i = 0; i < dy.size(); ++i) dy[i] *= activate_derivative(z[i], act);
  std::vector<double> dw(filters * g.patch(), 0.0), db(filters, 0.0), dx(rows * g.channels * hw, 0.0);
  for (size_t r = 0; r < rows; ++r)
    for (size_t f = 0; f < filters; ++f)
      for (size_t oy = 0; oy < g.out_h; ++oy)
        for (size_t ox = 0; ox < g.out_w; ++ox) {
          const double d = dy[(r * filters + f) * plane + oy * g.out_w + ox];
          db[f] += d;
          for (size_t c = 0; c < g.channels; ++c)
            for (size_t i = 0; i < k; ++i)
              for (size_t j = 0; j < k; ++j) {
                const long yy = long(oy * g.stride + i) - long(g.pad_top);
                const long xx = long(ox * g.stride + j) - long(g.pad_left);
                if (yy < 0 || xx < 0 || yy >= long(g.height) || xx >= long(g.width)) continue;
                const size_t wi = ((f * g.channels + c) * k + i) * k + j;
                const size_t xi = (r * g.channels + c) * hw + size_t(yy) * g.width + size_t(xx);
                dw[wi] += d * x[xi];
                dx[xi] += d * p[wi];
              }
        }
  for (size_t i = 0; i < dw.size(); ++i) grads[i] = float(dw[i]);
  for (size_t f = 0; f < filters; ++f) grads[dw.size() + f] = float(db[f]);
  return std::vector<float>(dx.begin(), dx.end());
}

/// y:(rows, C, OH, OW) window maxima; arg holds each maximum's index in its plane (first on ties).
template <typename T>
std::vector<T> maxpool_forward(const PoolGeometry& g, const std::vector<T>& x, size_t rows,
                               std::vector<size_t>* arg = nullptr) {
  const size_t planes = rows * g.channels, hw = g.height * g.width, out = g.out_h * g.out_w;
  std::vector<T> y(planes * out);
  if (arg) arg->assign(y.size(), 0);
  for (size_t pl = 0; pl < planes; ++pl)
    for (size_t oy = 0; oy < g.out_h; ++oy)
      for (size_t ox = 0; ox < g.out_w; ++ox) {
        size_t best_at = oy * g.stride * g.width + ox * g.stride;
        for (size_t a = 0; a < g.size; ++a)
          for (size_t c = 0; c < g.size; ++c) {
            const size_t at = (oy * g.stride + a) * g.width + ox * g.stride + c;
            if (x[pl * hw + at] > x[pl * hw + best_at]) best_at = at;
          }
        y[pl * out + oy * g.out_w + ox] = x[pl * hw + best_at];
        if (arg) (*arg)[pl * out + oy * g.out_w + ox] = best_at;
      }
  return y;
}

/// dx: dy routed to each window's maximum (summed where windows overlap).
inline std::vector<float> maxpool_backward(const PoolGeometry& g, const std::vector<float>& x,
                                           const std::vector<float>& dy, size_t rows) {
  std::vector<size_t> arg;
  maxpool_forward(g, x, rows, &arg);
  const size_t hw = g.height * g.width, out = g.out_h * g.out_w;
  std::vector<float> dx(rows * g.channels * hw, 0.f);
  for (size_t i = 0; i < dy.size(); ++i) dx[(i / out) * hw + arg[i]] += dy[i];
  return dx;
}

}  // namespace anycl::reference
