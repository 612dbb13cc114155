// Sums across processes for multi-process data parallelism. The default is the single-process
// identity; make_mpi_collective() gives the MPI one when anycl was built with ANYCL_WITH_MPI.
#pragma once

#include <memory>
#include <vector>

namespace anycl {

class Collective {
 public:
  virtual ~Collective() = default;
  /// This process's rank and the number of processes.
  virtual int rank() const { return 0; }
  virtual int size() const { return 1; }
  /// Element-wise sum over all processes, in place (every process gets the same result).
  virtual void sum(std::vector<float>& /*values*/) {}
  virtual void sum(std::vector<double>& /*values*/) {}
  /// Waits until every process gets here, sleeping rather than spinning while it waits, so a
  /// waiting process leaves the CPU to one being timed (benchmarks). No-op in one process.
  virtual void idle_barrier() {}
};

/// True when this build has MPI support.
bool mpi_available() noexcept;
/// The MPI collective over MPI_COMM_WORLD (initialising MPI if needed, with errors returned, not
/// fatal, so a failing peer becomes an anycl::Error). Throws ValidationError when built without MPI.
std::unique_ptr<Collective> make_mpi_collective();

}  // namespace anycl
