// anycl-tune-worker: the program the anycl library starts to measure tuning candidates and check
// parameter sets in child processes (anycl/blas/tune.hpp), so that a driver crash costs one
// candidate. Installed beside the library (or in <prefix>/libexec/anycl); not run by hand.
#include <cstdio>
#include <exception>

#include "anycl/blas/tune.hpp"

int main(int argc, char** argv) {
  try {
    return anycl::tune_worker_main(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "anycl-tune-worker: %s\n", e.what());
    return 1;
  }
}
