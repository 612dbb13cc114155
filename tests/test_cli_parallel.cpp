// Data-parallel training from the command line: `--devices 0,0` (two replicas in one process)
// and `mpirun -np 2 … --distributed` follow single-device training with the same global batch,
// and a rank that dies stops the job quickly instead of hanging it.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include "helpers.hpp"

using anycl::test::anycl_cli;
using anycl::test::run_command;

namespace {

// 6,400 samples in batches of 128: 50 steps in the one epoch; dropout on, so the masks' use of
// global sample positions is exercised too.
const std::string kRun =
    "train --limit 6400 --epochs 1 --layers 64 --dropout 0.2 --optimizer adam --seed 5 --quiet";
const std::string kMpirun = "mpirun -np 2 --allow-run-as-root --oversubscribe";

std::vector<double> metrics_row(const std::string& path) {
  std::ifstream in(path);
  std::string header, row;
  std::getline(in, header);
  std::getline(in, row);
  std::vector<double> values;
  std::istringstream cells(row);
  std::string cell;
  while (std::getline(cells, cell, ',')) values.push_back(std::stod(cell));
  REQUIRE_MESSAGE(values.size() == 7, "metrics row: ", row);
  return values;  // epoch, train_loss, train_acc, test_loss, test_acc, seconds, samples_per_s
}

void check_same_training(const std::vector<double>& got, const std::vector<double>& ref) {
  for (size_t i : {1, 2, 3, 4}) {
    CAPTURE(i);
    CHECK(std::abs(got[i] - ref[i]) <= 1e-3 * std::abs(ref[i]));
  }
}

// True when mpirun exists and this anycl was built with MPI.
bool have_mpi() {
  if (run_command("command -v mpirun").exit_code != 0) return false;
  const auto r = run_command(fmt::format(
      "{} -np 1 {} train --distributed --limit 1 --epochs 1 --layers none --quiet", kMpirun, anycl_cli()));
  return r.exit_code == 0;
}

}  // namespace

TEST_CASE("two devices in one process follow single-device training") {
  anycl::test::TempDir dir;
  auto r = run_command(fmt::format("{} {} --metrics {}", anycl_cli(), kRun, dir.file("one.csv")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  r = run_command(fmt::format("{} {} --devices 0,0 --metrics {}", anycl_cli(), kRun, dir.file("two.csv")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  check_same_training(metrics_row(dir.file("two.csv")), metrics_row(dir.file("one.csv")));
  r = run_command(fmt::format("{} {} --devices 0,nosuch", anycl_cli(), kRun));
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("--devices") != std::string::npos);
  r = run_command(fmt::format("{} {} --devices 0,0 --checkpoint {}", anycl_cli(), kRun, dir.file("ck")));
  CHECK(r.exit_code == 2);
}

TEST_CASE("two MPI ranks follow single-device training and only rank 0 writes") {
  if (!have_mpi()) {
    MESSAGE("skipped: no mpirun or anycl built without MPI (install libopenmpi-dev openmpi-bin and rebuild)");
    return;
  }
  anycl::test::TempDir dir;
  auto r = run_command(fmt::format("{} {} --metrics {}", anycl_cli(), kRun, dir.file("one.csv")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  r = run_command(fmt::format("{} {} {} --distributed --metrics {} --save {}", kMpirun, anycl_cli(), kRun,
                              dir.file("mpi.csv"), dir.file("m.anycl")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  check_same_training(metrics_row(dir.file("mpi.csv")), metrics_row(dir.file("one.csv")));
  const auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t p = r.output.find(what); p != std::string::npos; p = r.output.find(what, p + 1)) ++n;
    return n;
  };
  CHECK(count("Test accuracy") == 1);  // rank 0 alone reports
  CHECK(run_command(fmt::format("{} eval --model {}", anycl_cli(), dir.file("m.anycl"))).exit_code == 0);
}

TEST_CASE("a rank that dies stops the MPI job quickly with a message") {
  if (!have_mpi()) {
    MESSAGE("skipped: no mpirun or anycl built without MPI");
    return;
  }
  // Rank 1 trains for a moment and is then killed; rank 0 waits in the gradient all-reduce.
  const std::string job = fmt::format(
      "{0} sh -c '{1} train --distributed --epochs 50 --limit 20000 --layers 64 --quiet & pid=$!; "
      "if [ \"$OMPI_COMM_WORLD_RANK\" = 1 ]; then sleep 3; kill -9 $pid; fi; wait $pid'",
      kMpirun, anycl_cli());
  const auto start = std::chrono::steady_clock::now();
  const auto r = run_command("timeout 120 " + job);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  CHECK(r.exit_code != 0);
  CHECK(r.exit_code != 124);  // 124: timeout had to stop a hung job
  CHECK_MESSAGE(seconds < 100, "the job took ", seconds, " s to stop");
  CHECK_MESSAGE(r.output.find("mpirun") != std::string::npos, r.output);
}
