// The collective factory for builds without MPI.
#include "anycl/dist/collective.hpp"

#include "anycl/error.hpp"

namespace anycl {

#ifndef ANYCL_WITH_MPI
bool mpi_available() noexcept { return false; }

std::unique_ptr<Collective> make_mpi_collective() {
  throw ValidationError(
      "this anycl was built without MPI — install libopenmpi-dev and rebuild (cmake -DANYCL_WITH_MPI=ON)");
}
#endif

}  // namespace anycl
