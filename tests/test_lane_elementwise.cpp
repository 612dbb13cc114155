// The GPU form of the elementwise kernels (RuntimeImpl::lane_elementwise: an optimizer update four
// parameters a work-item, a dropout mask one element a work-item) gives the bits of the CPU form
// (16 and 64 a work-item), run here on the CPU runtime, at odd sizes, offsets and row bases.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <anycl/optim/optimizer.hpp>

#include "helpers.hpp"
#include "ops/activation.hpp"
#include "ops/dropout.hpp"

using anycl::Activation;
using anycl::DropoutMask;

namespace {

// Sets the runtime's elementwise form for the ops constructed in its scope (they read it once).
class ElementwiseForm {
 public:
  ElementwiseForm(anycl::Runtime& rt, bool lanes)
      : impl_(anycl::detail::RuntimeImpl::of(rt)), was_(impl_.lane_elementwise) {
    impl_.lane_elementwise = lanes;
  }
  ~ElementwiseForm() { impl_.lane_elementwise = was_; }
  ElementwiseForm(const ElementwiseForm&) = delete;
  ElementwiseForm& operator=(const ElementwiseForm&) = delete;

 private:
  anycl::detail::RuntimeImpl& impl_;
  bool was_;
};

std::unique_ptr<anycl::Optimizer> optimizer(anycl::Runtime& rt, size_t n, const char* name, bool lanes) {
  const ElementwiseForm form(rt, lanes);
  anycl::OptimizerConfig c;
  c.name = name;
  return anycl::make_optimizer(rt, n, c);
}

std::unique_ptr<anycl::DropoutOp> dropout_op(anycl::Runtime& rt, bool lanes) {
  const ElementwiseForm form(rt, lanes);
  return std::make_unique<anycl::DropoutOp>(rt);
}

}  // namespace

TEST_CASE("optimizer updates four parameters a work-item give the bits of sixteen a work-item") {
  auto& rt = anycl::test::runtime();
  unsigned seed = 500;
  for (const char* name : {"sgd", "momentum", "nesterov", "rmsprop", "adam", "adamw"})
    for (size_t n : {size_t(1), size_t(7), size_t(67), size_t(100003)}) {
      CAPTURE(name);
      CAPTURE(n);
      auto cpu = optimizer(rt, n, name, false), gpu = optimizer(rt, n, name, true);
      const auto w = anycl::test::random_floats(n, -1.f, 1.f, seed++);
      auto params_cpu = anycl::Tensor::from_host(rt, {n}, w),
           params_gpu = anycl::Tensor::from_host(rt, {n}, w);
      for (int step = 0; step < 3; ++step) {
        const auto grads =
            anycl::Tensor::from_host(rt, {n}, anycl::test::random_floats(n, -1.f, 1.f, seed++));
        cpu->step(params_cpu, grads);
        gpu->step(params_gpu, grads);
      }
      anycl::test::check_close(params_gpu.download(), params_cpu.download(), 0, 0,
                               "parameters after 3 steps");
    }
}

TEST_CASE("dropout masks one element a work-item give the bits of 64 a work-item, fused or not") {
  auto& rt = anycl::test::runtime();
  auto cpu = dropout_op(rt, false), gpu = dropout_op(rt, true);
  unsigned seed = 600;
  struct Case {
    size_t rows, cols;
    uint32_t row_base;
  };
  for (const Case c : {Case{1, 3, 0}, Case{13, 129, 5}, Case{128, 512, 0}, Case{7, 16, 3}}) {
    const std::string what = fmt::format("({}, {}) row_base {}", c.rows, c.cols, c.row_base);
    CAPTURE(what);
    const size_t n = c.rows * c.cols;
    const DropoutMask m{0.3f, 0x5eedull + seed, 3u, 0x10001u, c.row_base};
    const auto x =
        anycl::Tensor::from_host(rt, {c.rows, c.cols}, anycl::test::random_floats(n, -2.f, 2.f, seed++));
    anycl::Tensor y_cpu(rt, {c.rows, c.cols}), y_gpu(rt, {c.rows, c.cols});
    anycl::DeviceBuffer keep_cpu(rt, n, "mask"), keep_gpu(rt, n, "mask");
    cpu->forward(x, y_cpu, m, &keep_cpu);
    gpu->forward(x, y_gpu, m, &keep_gpu);
    anycl::test::check_close(y_gpu.download(), y_cpu.download(), 0, 0, "forward, mask kept");
    CHECK(anycl::test::read_back<uint8_t>(keep_gpu, n) == anycl::test::read_back<uint8_t>(keep_cpu, n));
    cpu->forward(x, y_cpu, m);
    gpu->forward(x, y_gpu, m);
    anycl::test::check_close(y_gpu.download(), y_cpu.download(), 0, 0, "forward");
    const auto dy = anycl::test::random_floats(n, -1.f, 1.f, seed++);
    auto dy_cpu = anycl::Tensor::from_host(rt, {c.rows, c.cols}, dy),
         dy_gpu = anycl::Tensor::from_host(rt, {c.rows, c.cols}, dy);
    cpu->backward(dy_cpu, m);
    gpu->backward(dy_gpu, m);
    anycl::test::check_close(dy_gpu.download(), dy_cpu.download(), 0, 0, "backward, mask regenerated");
    const auto bias =
        anycl::Tensor::from_host(rt, {c.cols}, anycl::test::random_floats(c.cols, -1.f, 1.f, seed++));
    for (Activation act : {Activation::linear, Activation::relu, Activation::tanh, Activation::sigmoid}) {
      CAPTURE(anycl::to_string(act));
      const auto z = anycl::test::random_floats(n, -3.f, 3.f, seed++);
      auto z_cpu = anycl::Tensor::from_host(rt, {c.rows, c.cols}, z),
           z_gpu = anycl::Tensor::from_host(rt, {c.rows, c.cols}, z);
      cpu->forward_bias_activation(z_cpu, bias, act, y_cpu, m, keep_cpu);
      gpu->forward_bias_activation(z_gpu, bias, act, y_gpu, m, keep_gpu);
      // The GPU form activates element by element, the CPU form sixteen lanes at once: the same
      // function, which a CPU runtime may round differently in its vector form (tanh, sigmoid).
      const bool exact = act == Activation::linear || act == Activation::relu;
      anycl::test::check_close(z_gpu.download(), z_cpu.download(), exact ? 0 : 1e-6, exact ? 0 : 1e-7,
                               "fused y");
      anycl::test::check_close(y_gpu.download(), y_cpu.download(), exact ? 0 : 1e-6, exact ? 0 : 1e-7,
                               "fused out");
      CHECK(anycl::test::read_back<uint8_t>(keep_gpu, n) == anycl::test::read_back<uint8_t>(keep_cpu, n));
    }
  }
}
