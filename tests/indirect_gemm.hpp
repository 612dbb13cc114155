// While alive, CLBlast runs every GEMM on its indirect kernel in its GEMMK=0 form with a small set
// (MWG = NWG = 32), whatever the device's own parameters: the layout `gemm` and the layers choose
// for that kernel (column-major calls, C's last rows split off, Dense's transposed operands) then
// runs on any test device. The device's parameters come back at the end of the scope.
#pragma once

#include <doctest/doctest.h>
#include <anycl/blas/tuning.hpp>
#include <anycl/runtime.hpp>

#include <map>
#include <string>

#include "blas/clblast_params.hpp"

namespace anycl::test {

/// CLBlast's Xgemm parameters in force on `rt`'s device now.
inline std::map<std::string, size_t> current_xgemm(Runtime& rt) {
  std::map<std::string, size_t> now;
  REQUIRE(detail::clblast_params::retrieve(rt.info().id, "Xgemm", now) == clblast::StatusCode::kSuccess);
  return now;
}

class IndirectGemmScope {
 public:
  explicit IndirectGemmScope(Runtime& rt) : rt_(rt) {
    REQUIRE(detail::clblast_params::retrieve(rt.info().id, "GemmRoutine", routine_) ==
            clblast::StatusCode::kSuccess);
    REQUIRE(detail::clblast_params::retrieve(rt.info().id, "Xgemm", xgemm_) == clblast::StatusCode::kSuccess);
    GemmTuning small;
    small.kernels["GemmRoutine"] = {{"XGEMM_MIN_INDIRECT_SIZE", 1}};
    small.kernels["Xgemm"] = {{"GEMMK", 0}, {"KREG", 1},  {"KWG", 16}, {"KWI", 2},
                              {"MDIMA", 8}, {"MDIMC", 8}, {"MWG", 32}, {"NDIMB", 8},
                              {"NDIMC", 8}, {"NWG", 32},  {"SA", 0},   {"SB", 0},
                              {"STRM", 0},  {"STRN", 0},  {"VWM", 4},  {"VWN", 4}};
    apply_tuning(rt, small);
  }
  ~IndirectGemmScope() {
    GemmTuning restore;
    restore.kernels["GemmRoutine"] = routine_;
    restore.kernels["Xgemm"] = xgemm_;
    apply_tuning(rt_, restore);
  }
  IndirectGemmScope(const IndirectGemmScope&) = delete;
  IndirectGemmScope& operator=(const IndirectGemmScope&) = delete;

 private:
  Runtime& rt_;
  std::map<std::string, size_t> routine_, xgemm_;
};

}  // namespace anycl::test
