// Data-parallel training from the command line: `--devices 0,0` (two replicas in one process)
// and `mpirun -np 2 … --distributed` follow single-device training with the same global batch,
// checkpoint and resume bit-identically (also after SIGTERM, and across one device and two), and a
// rank that dies, or cannot read the checkpoint, stops the job quickly instead of hanging it. A CNN
// takes both unchanged.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <chrono>
#include <fstream>
#include <sstream>

#include <anycl/train/checkpoint.hpp>

#include "helpers.hpp"

using anycl::test::anycl_cli;
using anycl::test::run_command;

namespace {

// 6,400 samples in batches of 128: 50 steps in the one epoch; dropout on, so the masks' use of
// global sample positions is exercised too.
const std::string kRun =
    "train --limit 6400 --epochs 1 --layers 64 --dropout 0.2 --optimizer adam --seed 5 --quiet";
const std::string kMpirun = "mpirun -np 2 --allow-run-as-root --oversubscribe";

// Every row of a metrics CSV: epoch, train_loss, train_acc, test_loss, test_acc, seconds, samples_per_s.
std::vector<std::vector<double>> metrics_rows(const std::string& path) {
  std::ifstream in(path);
  std::string header, row;
  std::getline(in, header);
  std::vector<std::vector<double>> rows;
  while (std::getline(in, row)) {
    std::vector<double> values;
    std::istringstream cells(row);
    std::string cell;
    while (std::getline(cells, cell, ',')) values.push_back(std::stod(cell));
    REQUIRE_MESSAGE(values.size() == 7, "metrics row: ", row);
    rows.push_back(values);
  }
  return rows;
}

std::vector<double> metrics_row(const std::string& path) {
  const auto rows = metrics_rows(path);
  REQUIRE_MESSAGE(!rows.empty(), "no metrics rows in ", path);
  return rows.front();
}

void check_same_training(const std::vector<double>& got, const std::vector<double>& ref) {
  for (size_t i : {1, 2, 3, 4}) {
    CAPTURE(i);
    CHECK(std::abs(got[i] - ref[i]) <= 1e-3 * std::abs(ref[i]));
  }
}

// 640 samples in batches of 64: 10 steps per epoch, short enough for several runs per test.
const std::string kCheckpointRun =
    "train --limit 640 --batch 64 --layers 32 --dropout 0.2 --optimizer adam --seed 5 --quiet";

// A metrics CSV's rows without the timing columns (epoch, train loss and accuracy, test loss and accuracy).
std::vector<std::string> csv_figures(const std::string& path) {
  std::vector<std::string> rows;
  std::istringstream lines(anycl::test::slurp(path));
  for (std::string line; std::getline(lines, line);) {
    size_t cut = 0;
    for (int comma = 0; comma < 5 && cut != std::string::npos; ++comma) cut = line.find(',', cut + 1);
    rows.push_back(line.substr(0, cut));
  }
  return rows;
}

// True when mpirun exists and this anycl was built with MPI.
bool have_mpi() {
  if (run_command("command -v mpirun").exit_code != 0) return false;
  const auto r = run_command(fmt::format(
      "{} -np 1 {} train --distributed --limit 1 --epochs 1 --layers none --quiet", kMpirun, anycl_cli()));
  return r.exit_code == 0;
}

}  // namespace

TEST_SUITE_BEGIN("cli");  // the anycl command as a child process (a CTest label: tests/CMakeLists.txt)

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
}

TEST_CASE("two devices stop at --max-steps - evaluate - and the checkpoint resumes from there") {
  anycl::test::TempDir dir;
  const std::string ck = dir.file("ck");
  auto r = run_command(fmt::format(
      "{} {} --devices 0,0 --epochs 2 --max-steps 13 --checkpoint {} --save {}", anycl_cli(),
      std::string(kCheckpointRun).replace(kCheckpointRun.find(" --quiet"), 8, ""), ck, dir.file("m.anycl")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(r.output.find("stopped after 13 training steps (--max-steps)") != std::string::npos);
  CHECK(r.output.find("Test accuracy:") != std::string::npos);
  const anycl::Checkpoint c = anycl::read_checkpoint(ck + "/checkpoint.anyclckpt");
  CHECK(c.steps_done == 13);
  CHECK(c.epoch == 1);  // 10 steps per epoch: stopped 3 steps into the second
  CHECK(c.step_in_epoch == 3);
}

TEST_CASE("two distinct PoCL devices with --devices all follow single-device training") {
  // POCL_DEVICES="pthread pthread" makes PoCL offer two devices (two cl_device_ids), as a machine
  // with two GPUs would: replicas on different devices, each with its own CLBlast kernels.
  const std::string two = "POCL_DEVICES='pthread pthread' ";
  const auto listed = run_command(two + anycl_cli() + " devices");
  REQUIRE_MESSAGE(listed.exit_code == 0, listed.output);
  const auto count = [&](const std::string& what) {
    size_t n = 0;
    for (size_t p = listed.output.find(what); p != std::string::npos; p = listed.output.find(what, p + 1))
      ++n;
    return n;
  };
  const size_t devices = count(" device "), pocl = count("Portable Computing Language");
  if (devices != pocl || pocl < 2)
    ANYCL_SKIP_TEST(
        Missing::capability,
        fmt::format("needs two PoCL devices and no other (POCL_DEVICES='pthread pthread'); found {} "
                    "device(s), {} of them PoCL",
                    devices, pocl));
  anycl::test::TempDir dir;
  auto r = run_command(fmt::format("{}{} {} --metrics {}", two, anycl_cli(), kRun, dir.file("one.csv")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  r = run_command(fmt::format("{}{} {} --devices all --metrics {}", two, anycl_cli(),
                              std::string(kRun).replace(kRun.find(" --quiet"), 8, ""), dir.file("all.csv")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK_MESSAGE(r.output.find("1 process(es) × 2 device(s) = 2 replicas") != std::string::npos, r.output);
  check_same_training(metrics_row(dir.file("all.csv")), metrics_row(dir.file("one.csv")));
}

TEST_CASE("two MPI ranks follow single-device training and only rank 0 writes") {
  if (!have_mpi()) {
    ANYCL_SKIP_TEST(Missing::installed_by_setup,
                    "no mpirun or anycl built without MPI (install libopenmpi-dev openmpi-bin and rebuild)");
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

TEST_CASE("a CNN trains the same on one device - two devices - two MPI ranks - and its model predicts") {
  // A small convolutional model (dropout on): --devices and --distributed take it unchanged.
  const std::string run =
      "train --limit 1024 --epochs 1 --layers conv4x3,pool2,dropout0.25,flatten,16 --optimizer adam --seed 5 "
      "--quiet";
  anycl::test::TempDir dir;
  auto r = run_command(fmt::format("{} {} --metrics {} --save {}", anycl_cli(), run, dir.file("one.csv"),
                                   dir.file("one.anycl")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  r = run_command(fmt::format("{} {} --devices 0,0 --metrics {}", anycl_cli(), run, dir.file("two.csv")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  check_same_training(metrics_row(dir.file("two.csv")), metrics_row(dir.file("one.csv")));

  r =
      run_command(fmt::format("{} predict --model {} --images "
                              "/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz --first 2",
                              anycl_cli(), dir.file("one.anycl")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK_MESSAGE(r.output.find("image,class,probability\n0,") != std::string::npos, r.output);
  CHECK_MESSAGE(r.output.find("\n1,") != std::string::npos, r.output);

  if (!have_mpi()) {
    ANYCL_SKIP_TEST(Missing::installed_by_setup,
                    "no mpirun or anycl built without MPI (install libopenmpi-dev openmpi-bin and rebuild)");
  }
  r = run_command(
      fmt::format("{} {} {} --distributed --metrics {}", kMpirun, anycl_cli(), run, dir.file("mpi.csv")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  check_same_training(metrics_row(dir.file("mpi.csv")), metrics_row(dir.file("one.csv")));
}

TEST_CASE("a rank that dies stops the MPI job quickly with a message") {
  if (!have_mpi()) ANYCL_SKIP_TEST(Missing::installed_by_setup, "no mpirun or anycl built without MPI");
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

TEST_CASE("two devices in one process checkpoint and resume bit-identically") {
  anycl::test::TempDir dir;
  const std::string run = fmt::format("{} {} --devices 0,0", anycl_cli(), kCheckpointRun);
  auto r = run_command(fmt::format("{} --epochs 3 --save {} --metrics {}", run, dir.file("whole.anycl"),
                                   dir.file("whole.csv")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  r = run_command(fmt::format("{} --epochs 1 --checkpoint {} --checkpoint-every 4", run, dir.file("ck")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  // The recorded flags (--devices 0,0 among them) come back with --resume.
  r = run_command(fmt::format("{} train --resume {} --epochs 3 --save {} --metrics {}", anycl_cli(),
                              dir.file("ck"), dir.file("resumed.anycl"), dir.file("resumed.csv")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(anycl::test::slurp(dir.file("resumed.anycl")) == anycl::test::slurp(dir.file("whole.anycl")));
  CHECK(csv_figures(dir.file("resumed.csv")) == csv_figures(dir.file("whole.csv")));

  // A one-device checkpoint continues on two devices with the same global batch.
  r = run_command(
      fmt::format("{} {} --epochs 1 --checkpoint {}", anycl_cli(), kCheckpointRun, dir.file("one")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  r = run_command(fmt::format("{} train --resume {} --devices 0,0 --epochs 3 --metrics {}", anycl_cli(),
                              dir.file("one"), dir.file("mixed.csv")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const auto mixed = metrics_rows(dir.file("mixed.csv")), whole = metrics_rows(dir.file("whole.csv"));
  REQUIRE(mixed.size() == 3);
  check_same_training(mixed[2], whole[2]);
}

TEST_CASE("SIGTERM stops two devices with a checkpoint that resumes bit-identically") {
  anycl::test::TempDir dir;
  const std::string run = fmt::format("{} {} --devices 0,0", anycl_cli(), kCheckpointRun);
  const std::string ck = dir.file("ck"), file = ck + "/checkpoint.anyclckpt";
  // Started in the background, signalled once the first checkpoint exists.
  const auto r = run_command(fmt::format(
      "timeout 120 sh -c '{} --epochs 1000 --checkpoint {} --checkpoint-every 3 >{} 2>&1 & pid=$!; "
      "while [ ! -f {} ]; do sleep 0.05; done; kill -TERM $pid; wait $pid'",
      run, ck, dir.file("log.txt"), file));
  const std::string log = anycl::test::slurp(dir.file("log.txt"));
  CHECK_MESSAGE(r.exit_code == 143, log);
  CHECK_MESSAGE(log.find("SIGTERM") != std::string::npos, log);
  CHECK_MESSAGE(log.find("anycl train --resume " + ck) != std::string::npos, log);
  const anycl::Checkpoint c = anycl::read_checkpoint(file);
  const size_t epochs = c.epoch + 1;
  auto whole = run_command(fmt::format("{} --epochs {} --save {}", run, epochs, dir.file("whole.anycl")));
  REQUIRE_MESSAGE(whole.exit_code == 0, whole.output);
  auto resumed = run_command(fmt::format("{} train --resume {} --epochs {} --save {}", anycl_cli(), ck,
                                         epochs, dir.file("resumed.anycl")));
  REQUIRE_MESSAGE(resumed.exit_code == 0, resumed.output);
  CHECK(anycl::test::slurp(dir.file("resumed.anycl")) == anycl::test::slurp(dir.file("whole.anycl")));
}

TEST_CASE("two MPI ranks checkpoint and resume bit-identically and a missing checkpoint fails fast") {
  if (!have_mpi()) ANYCL_SKIP_TEST(Missing::installed_by_setup, "no mpirun or anycl built without MPI");
  anycl::test::TempDir dir;
  const std::string run = fmt::format("{} {} {} --distributed", kMpirun, anycl_cli(), kCheckpointRun);
  auto r = run_command(fmt::format("{} --epochs 2 --save {}", run, dir.file("whole.anycl")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  r = run_command(fmt::format("{} --epochs 1 --checkpoint {} --checkpoint-every 4", run, dir.file("ck")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  r = run_command(fmt::format("{} {} train --resume {} --epochs 2 --save {}", kMpirun, anycl_cli(),
                              dir.file("ck"), dir.file("resumed.anycl")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(anycl::test::slurp(dir.file("resumed.anycl")) == anycl::test::slurp(dir.file("whole.anycl")));

  // Rank 1 looks in a folder that does not exist: the job ends with the reason instead of hanging.
  r = run_command(
      fmt::format("timeout 120 {} sh -c 'd={}; if [ \"$OMPI_COMM_WORLD_RANK\" = 1 ]; then d={}; fi; "
                  "exec {} train --resume $d --epochs 3'",
                  kMpirun, dir.file("ck"), dir.file("nowhere"), anycl_cli()));
  CHECK(r.exit_code != 0);
  CHECK(r.exit_code != 124);  // 124: timeout had to stop a hung job
  CHECK_MESSAGE(r.output.find("cannot open checkpoint") != std::string::npos, r.output);
}

TEST_SUITE_END();
