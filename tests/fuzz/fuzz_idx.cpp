// libFuzzer target for the IDX reader: any bytes (plain or gzip) must give an IdxArray or a
// DataError — never a crash, a hang, an out-of-bounds read or an absurd allocation.
#include <unistd.h>

#include <anycl/data/idx.hpp>
#include <anycl/error.hpp>
#include <cstdint>
#include <cstdio>
#include <string>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // read_idx takes a path: the input goes to a per-process file (in memory where /dev/shm exists).
  static const std::string path = (access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp") +
                                  std::string("/anycl-fuzz-idx.") + std::to_string(getpid());
  FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) return 0;
  std::fwrite(data, 1, size, f);
  std::fclose(f);
  try {
    const auto a = anycl::data::read_idx(path, size % 2 ? 0 : 3);
    (void)a;
  } catch (const anycl::Error&) {
  }
  std::remove(path.c_str());
  return 0;
}
