// libFuzzer target for the readers that take a path: any bytes must give a result or an anycl::Error
// — never a crash, a hang, an out-of-bounds read or an absurd allocation. The input's size picks the
// reader: IDX (plain or gzip, any or 3 dims), or the CLBlast tuning file (load, then the constraint
// check that runs before parameters are applied).
#include <unistd.h>

#include <anycl/blas/tuning.hpp>
#include <anycl/data/idx.hpp>
#include <anycl/error.hpp>
#include <cstdint>
#include <cstdio>
#include <string>

#include "blas/tuning/tuning_constraints.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // The readers take a path: the input goes to a per-process file (in memory where /dev/shm exists).
  static const std::string path = (access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp") +
                                  std::string("/anycl-fuzz-idx.") + std::to_string(getpid());
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    if (size % 3 == 2) {
      if (const auto t = anycl::load_tuning(path)) (void)anycl::detail::tuning_constraint_violation(*t);
    } else {
      const auto a = anycl::data::read_idx(path, size % 3 ? 0 : 3);
      (void)a;
    }
  } catch (const anycl::Error&) {
  }
  std::remove(path.c_str());
  return 0;
}
