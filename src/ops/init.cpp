// Launcher for cl_kernels/init.cl and the initialiser limits.
#include "init.hpp"

#include <cmath>

#include "anycl/error.hpp"
#include "kernel_call.hpp"

namespace anycl {

const char* to_string(Init init) noexcept {
  return init == Init::he_uniform ? "he_uniform" : "glorot_uniform";
}

Init parse_init(const std::string& name) {
  if (name == "glorot_uniform" || name == "glorot") return Init::glorot_uniform;
  if (name == "he_uniform" || name == "he") return Init::he_uniform;
  throw ValidationError("unknown initialiser '" + name + "' — choose glorot_uniform or he_uniform");
}

float init_limit(Init init, size_t fan_in, size_t fan_out) {
  return init == Init::he_uniform ? float(std::sqrt(6.0 / double(fan_in)))
                                  : float(std::sqrt(6.0 / double(fan_in + fan_out)));
}

void uniform_init(Runtime& rt, Tensor& w, float limit, uint64_t seed, uint32_t stream) {
  compute::kernel k = detail::kernel(rt, "init", "uniform_init");
  using detail::u32;
  detail::set_args(k, w.mem(), u32(w.offset(), "offset"), u32(w.size(), "size"), cl_float(limit),
                   cl_uint(seed & 0xffffffffu), cl_uint(seed >> 32), cl_uint(stream));
  detail::launch_1d(rt, k, w.size());
}

}  // namespace anycl
