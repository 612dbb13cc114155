// MPI_Allreduce over MPI_COMM_WORLD, host-staged. Errors are returned (not fatal) and become
// anycl::Error; when a peer process dies, Open MPI's launcher stops the others.
#include <fmt/format.h>
#include <mpi.h>

#include <chrono>
#include <thread>

#include "anycl/dist/collective.hpp"
#include "anycl/error.hpp"

namespace anycl {
namespace {

void check_mpi(int status, const char* call) {
  if (status == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(status, text, &length);
  throw Error(fmt::format("{} failed: {} — a peer process may have died; see mpirun's output", call,
                          std::string(text, size_t(length))));
}

class MpiCollective final : public Collective {
 public:
  MpiCollective() {
    int initialized = 0;
    MPI_Initialized(&initialized);
    if (!initialized) {
      int provided = 0;
      check_mpi(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided), "MPI_Init_thread");
      owns_ = true;
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
  }
  ~MpiCollective() override {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (owns_ && !finalized) MPI_Finalize();
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  void sum(std::vector<float>& values) override {
    check_mpi(
        MPI_Allreduce(MPI_IN_PLACE, values.data(), int(values.size()), MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD),
        "MPI_Allreduce");
  }
  void sum(std::vector<double>& values) override {
    check_mpi(
        MPI_Allreduce(MPI_IN_PLACE, values.data(), int(values.size()), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD),
        "MPI_Allreduce");
  }
  void idle_barrier() override {
    MPI_Request request = MPI_REQUEST_NULL;
    check_mpi(MPI_Ibarrier(MPI_COMM_WORLD, &request), "MPI_Ibarrier");
    for (int done = 0; !done;) {
      check_mpi(MPI_Test(&request, &done, MPI_STATUS_IGNORE), "MPI_Test");
      if (!done) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

 private:
  int rank_ = 0, size_ = 1;
  bool owns_ = false;
};

}  // namespace

bool mpi_available() noexcept { return true; }

std::unique_ptr<Collective> make_mpi_collective() { return std::make_unique<MpiCollective>(); }

}  // namespace anycl
