// CLBlast's parameters belong to the process, one set a device, while anycl's threads may each own a
// Runtime on that device (docs/guarantees.md, "Threads"). A convolution's weight gradient runs on an
// Xgemm set of its own (ConvDwGemmScope) and a tuning changes the set: another Runtime's GEMM must
// neither read nor run on a set another thread has in place for the moment (blas/clblast_params_lock.hpp).
// Not among the Oclgrind kernel tests: test_conv2d.cpp checks the same kernels there on one thread.
#include <doctest/doctest.h>
#include <anycl/blas/blas.hpp>
#include <anycl/blas/tuning.hpp>
#include <anycl/nn/conv2d.hpp>
#include <anycl/tensor.hpp>

#include <atomic>
#include <chrono>
#include <cstring>
#include <exception>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "blas/clblast_params.hpp"
#include "blas/gemm_plan.hpp"
#include "helpers.hpp"
#include "indirect_gemm.hpp"

namespace {

// The test runtime's convolutions' weight gradients on a 16-wide Xgemm set while it lives (the model's
// set, IndirectGemmScope's, is 32 wide): as a tuning's `anyclConvDwXgemm` line sets it.
class DwSet {
 public:
  explicit DwSet(anycl::Runtime& rt) : rt_(rt) {
    std::map<std::string, size_t> set;
    REQUIRE(anycl::detail::clblast_params::retrieve(rt.info().id, "Xgemm", set) ==
            clblast::StatusCode::kSuccess);
    set["MWG"] = 16, set["VWM"] = 2;  // MDIMC·VWM = MDIMA·VWM = 16
    anycl::detail::gemm_state(rt).dw_xgemm = set;
  }
  ~DwSet() { anycl::detail::gemm_state(rt_).dw_xgemm.clear(); }
  DwSet(const DwSet&) = delete;
  DwSet& operator=(const DwSet&) = delete;

 private:
  anycl::Runtime& rt_;
};

// C = A·B for small integers (every product and sum exact in float), on the host.
std::vector<float> host_product(const std::vector<float>& a, const std::vector<float>& b, size_t m, size_t n,
                                size_t k) {
  std::vector<float> c(m * n, 0.f);
  for (size_t i = 0; i < m; ++i)
    for (size_t p = 0; p < k; ++p)
      for (size_t j = 0; j < n; ++j) c[i * n + j] += a[i * k + p] * b[p * n + j];
  return c;
}

// A GEMM whose sides are no multiple of 16 or 32: CLBlast pads it into a temporary on either set.
constexpr size_t kM = 70, kN = 45, kK = 38;

std::vector<float> device_product(anycl::Runtime& rt, const std::vector<float>& a,
                                  const std::vector<float>& b) {
  const auto at = anycl::Tensor::from_host(rt, {kM, kK}, a), bt = anycl::Tensor::from_host(rt, {kK, kN}, b);
  anycl::Tensor c(rt, {kM, kN});
  anycl::matmul(at, anycl::Trans::no, bt, anycl::Trans::no, c);
  return c.download();
}

// A convolution's forward and backward pass (patch 144, so dW runs on the dW set): its parameter
// gradients, then dx.
std::vector<float> conv_gradients(anycl::Runtime& rt, const std::vector<float>& p,
                                  const std::vector<float>& x, const std::vector<float>& dy) {
  anycl::Conv2D conv(8, 3, 1, anycl::Padding::valid, anycl::Activation::relu);
  const anycl::Shape in{16, 6, 6};
  const size_t batch = 4;
  auto params = anycl::Tensor::from_host(rt, {p.size()}, p);
  anycl::Tensor grads(rt, {p.size()});
  conv.build(rt, in, batch, params, grads, 0);
  conv.set_forward(anycl::ConvForward::im2col_gemm);
  const anycl::StepContext ctx;
  const auto xt = anycl::Tensor::from_host(rt, {batch, x.size() / batch}, x);
  anycl::Tensor y = conv.forward(xt, ctx);
  auto dyt = anycl::Tensor::from_host(rt, y.shape(), dy);
  const anycl::Tensor dx = conv.backward(dyt, ctx, true);
  std::vector<float> out = grads.download();
  const std::vector<float> dxs = dx.download();
  out.insert(out.end(), dxs.begin(), dxs.end());
  return out;
}

bool bit_equal(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

}  // namespace

// Deterministic: the scope is held while the other thread starts; it can neither finish nor have read
// the dW set's tiles. With ClblastParamsUse taking no lock, it read MWG 16 and finished at once
// (checked by hand, 2 runs of 2).
TEST_CASE("another Runtime's GEMM waits while a convolution's weight-gradient Xgemm set is in place") {
  auto& rt = anycl::test::runtime();
  const anycl::test::IndirectGemmScope indirect(rt);  // 32-wide tiles on the device, for every Runtime
  const DwSet dw_set(rt);
  anycl::Runtime other;  // the same device ($ANYCL_DEVICE), another context
  REQUIRE(other.info().id == rt.info().id);
  const auto a = anycl::test::random_ints(kM * kK, -4, 4, 2100),
             b = anycl::test::random_ints(kK * kN, -4, 4, 2101);
  std::atomic<int> stage{0};  // 1: the other thread started; 2: it finished
  anycl::detail::GemmLayoutParams seen;
  std::vector<float> c;
  std::string error;
  std::thread t;
  {
    const anycl::detail::ConvDwGemmScope scope(rt);
    t = std::thread([&] {
      stage = 1;
      try {
        anycl::detail::forget_gemm_layout(other);
        seen = anycl::detail::layout_params(other);
        c = device_product(other, a, b);
      } catch (const std::exception& e) {
        error = e.what();
      }
      stage = 2;
    });
    while (stage.load() == 0) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // time enough to get past an absent lock
    CHECK(stage.load() == 1);                                     // still waiting for the set to be put back
  }
  t.join();
  REQUIRE_MESSAGE(error.empty(), error);
  CHECK(seen.mwg == 32);  // the device's set, not the dW set of the convolution on `rt`
  CHECK(c == host_product(a, b, kM, kN, kK));
}

// Two threads at once, each with its Runtime on the device: convolutions whose dW swaps the set in and
// out on one, GEMMs on the other; each thread's results equal a run alone, bit for bit, and neither
// thread sees an error. (Any valid set gives these GEMMs the same bits, so this guards against the
// interleaving's errors and crashes; the case above is the one that catches a call on the wrong set.)
TEST_CASE("a convolution's weight-gradient set on one Runtime and GEMMs on another, in two threads") {
  auto& rt = anycl::test::runtime();
  const anycl::test::IndirectGemmScope indirect(rt);
  const DwSet dw_set(rt);
  anycl::Runtime other;
  REQUIRE(other.info().id == rt.info().id);
  const auto p = anycl::test::random_floats(8 * 16 * 9 + 8, -0.5f, 0.5f, 2110);
  const auto x = anycl::test::random_floats(4 * 16 * 6 * 6, -1.f, 1.f, 2111);
  const auto dy = anycl::test::random_floats(4 * 8 * 4 * 4, -1.f, 1.f, 2112);
  const auto a = anycl::test::random_ints(kM * kK, -4, 4, 2113),
             b = anycl::test::random_ints(kK * kN, -4, 4, 2114);
  const std::vector<float> conv_alone = conv_gradients(rt, p, x, dy);
  const std::vector<float> product_alone = device_product(other, a, b);
  REQUIRE(product_alone == host_product(a, b, kM, kN, kK));
  constexpr int kRounds = 12;
  int conv_mismatches = 0, product_mismatches = 0;
  std::string conv_error, product_error;
  std::thread conv_thread([&] {
    try {
      for (int i = 0; i < kRounds; ++i)
        conv_mismatches += !bit_equal(conv_gradients(rt, p, x, dy), conv_alone);
    } catch (const std::exception& e) {
      conv_error = e.what();
    }
  });
  std::thread product_thread([&] {
    try {
      for (int i = 0; i < 4 * kRounds; ++i) {
        anycl::detail::forget_gemm_layout(other);  // the layout read again each time, in the middle of it
        product_mismatches += !bit_equal(device_product(other, a, b), product_alone);
      }
    } catch (const std::exception& e) {
      product_error = e.what();
    }
  });
  conv_thread.join();
  product_thread.join();
  REQUIRE_MESSAGE(conv_error.empty(), conv_error);
  REQUIRE_MESSAGE(product_error.empty(), product_error);
  CHECK(conv_mismatches == 0);
  CHECK(product_mismatches == 0);
  std::map<std::string, size_t> after;
  REQUIRE(anycl::detail::clblast_params::retrieve(rt.info().id, "Xgemm", after) ==
          clblast::StatusCode::kSuccess);
  CHECK(after.at("MWG") == 32);  // the dW set put back every time
}

// A runtime's GEMM layout follows CLBlast's parameters wherever they were changed: a tuning applied on
// another Runtime of the device is what this one's calls are laid out by next (each change counts a
// generation; before it, this runtime kept the tiles it had read).
TEST_CASE("a tuning applied on another Runtime of the device is what this runtime's GEMMs are laid out by") {
  auto& rt = anycl::test::runtime();
  const anycl::test::IndirectGemmScope indirect(rt);  // puts the device's set back on `rt` at the end
  CHECK(anycl::detail::layout_params(rt).mwg == 32);
  anycl::Runtime other;
  REQUIRE(other.info().id == rt.info().id);
  std::map<std::string, size_t> narrow;
  REQUIRE(anycl::detail::clblast_params::retrieve(rt.info().id, "Xgemm", narrow) ==
          clblast::StatusCode::kSuccess);
  narrow["MWG"] = 16, narrow["VWM"] = 2;
  anycl::GemmTuning tuning;
  tuning.kernels["Xgemm"] = narrow;
  anycl::apply_tuning(other, tuning);
  CHECK(anycl::detail::layout_params(rt).mwg == 16);
  const auto a = anycl::test::random_ints(kM * kK, -4, 4, 2120),
             b = anycl::test::random_ints(kK * kN, -4, 4, 2121);
  CHECK(device_product(rt, a, b) == host_product(a, b, kM, kN, kK));
}
