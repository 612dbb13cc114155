// Data-parallel scaling from the command line: `anycl train --split` (explicit and auto shares
// follow single-device training; bad input exits 2), and `anycl bench mlp --devices 0,0` /
// `--distributed` print the single-device and data-parallel figures with an efficiency
// (structure only: timing is never asserted).
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <anycl/train/checkpoint.hpp>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "helpers.hpp"

using anycl::test::anycl_cli;
using anycl::test::run_command;

namespace {

// 50 steps of 128 with dropout, as in test_cli_parallel.cpp.
const std::string kRun =
    "train --limit 6400 --epochs 1 --layers 64 --dropout 0.2 --optimizer adam --seed 5 --quiet";
const std::string kBench = "bench mlp --limit 256 --repeats 1";
const std::string kMpirun = "mpirun -np 2 --allow-run-as-root --oversubscribe";

// train_loss, train_acc, test_loss, test_acc of the first metrics row.
std::vector<double> metrics_row(const std::string& path) {
  std::ifstream in(path);
  std::string header, row, cell;
  std::getline(in, header);
  std::getline(in, row);
  std::vector<double> values;
  std::istringstream cells(row);
  while (std::getline(cells, cell, ',')) values.push_back(std::stod(cell));
  REQUIRE_MESSAGE(values.size() == 7, "metrics row: ", row);
  return {values[1], values[2], values[3], values[4]};
}

void check_same_training(const std::string& got_path, const std::string& ref_path) {
  const std::vector<double> got = metrics_row(got_path), ref = metrics_row(ref_path);
  for (size_t i = 0; i < ref.size(); ++i) {
    CAPTURE(i);
    CHECK(std::abs(got[i] - ref[i]) <= 1e-3 * std::abs(ref[i]));
  }
}

bool have_mpi() {
  if (run_command("command -v mpirun").exit_code != 0) return false;
  const auto r = run_command(fmt::format(
      "{} -np 1 {} train --distributed --limit 1 --epochs 1 --layers none --quiet", kMpirun, anycl_cli()));
  return r.exit_code == 0;
}

size_t count_of(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
  return n;
}

// The data-parallel row of `anycl bench mlp … --json`, checked for the fields people read.
nlohmann::json parallel_row(const std::string& output, double replicas) {
  const auto j = nlohmann::json::parse(output);
  CHECK(j.contains("device"));
  CHECK(j.contains("date"));
  REQUIRE(j.contains("mlp_parallel"));
  REQUIRE(j["mlp_parallel"].size() >= 2);
  CHECK(j["mlp_parallel"][0]["configuration"].get<std::string>().find("alone") != std::string::npos);
  const nlohmann::json row = j["mlp_parallel"].back();
  CHECK(row["replicas"].get<double>() == replicas);
  for (const char* field :
       {"samples/s", "epoch s (60000)", "compute ms", "exchange ms", "update ms", "efficiency"}) {
    CAPTURE(field);
    REQUIRE(row[field].is_number());
    CHECK(row[field].get<double>() > 0);
  }
  CHECK(row["efficiency vs"].get<std::string>().find("one device") != std::string::npos);
  return row;
}

}  // namespace

TEST_SUITE_BEGIN("cli");  // the anycl command as a child process (a CTest label: tests/CMakeLists.txt)

TEST_CASE("train with --split 3:1 and --split auto follows single-device training") {
  anycl::test::TempDir dir;
  auto r = run_command(fmt::format("{} {} --metrics {}", anycl_cli(), kRun, dir.file("one.csv")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  r = run_command(
      fmt::format("{} {} --devices 0,0 --split 3:1 --metrics {}", anycl_cli(), kRun, dir.file("w.csv")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  check_same_training(dir.file("w.csv"), dir.file("one.csv"));
  r = run_command(fmt::format("{} {} --devices 0,0 --split auto --metrics {} --checkpoint {}", anycl_cli(),
                              kRun, dir.file("a.csv"), dir.file("ck")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  check_same_training(dir.file("a.csv"), dir.file("one.csv"));
  // Auto shares are printed, even with --quiet, and repeat the run exactly when given back.
  CHECK_MESSAGE(r.output.find("split: auto") != std::string::npos, r.output);
  const size_t at = r.output.find("with --split ");
  REQUIRE_MESSAGE(at != std::string::npos, r.output);
  const std::string printed = r.output.substr(at + 13, r.output.find(')', at) - at - 13);
  CAPTURE(printed);
  // A resume must split as the run did: the checkpoint records the measured shares, not "auto".
  const anycl::RunConfig recorded = anycl::read_checkpoint(dir.file("ck") + "/checkpoint.anyclckpt").run;
  std::vector<double> printed_shares;
  std::istringstream parts(printed);
  for (std::string part; std::getline(parts, part, ':');) printed_shares.push_back(std::stod(part));
  CHECK(recorded.shares == printed_shares);
  r = run_command(fmt::format("{} {} --devices 0,0 --split {} --metrics {}", anycl_cli(), kRun, printed,
                              dir.file("again.csv")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(metrics_row(dir.file("again.csv")) == metrics_row(dir.file("a.csv")));
}

TEST_CASE("bad --split values exit 2 and say what is wrong") {
  anycl::test::expect_train_usage_errors({
      {"--devices 0,0 --split 1:2:3", "3 weight(s) but training uses 2 replica(s)"},
      {"--devices 0,0 --split 5", "1 weight(s)"},
      {"--devices 0,0 --split 1:0", "positive"},
      {"--devices 0,0 --split -1:2", "positive"},
      {"--devices 0,0 --split 1:x", "'x' in '1:x' is not a number"},
      {"--devices 0,0 --split 1,1", "not a number"},
      {"--devices 0,0 --split 1:", "not a number"},
      {"--devices 0,0 --split=", "--split is empty"},
      {"--split 1:1", "add --devices"},
  });
}

TEST_CASE("bench mlp on two devices prints single-device and data-parallel figures with an efficiency") {
  auto r = run_command(fmt::format("{} {} --devices 0,0", anycl_cli(), kBench));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  for (const char* text : {"one device alone", "data-parallel: 1 process(es) × 2 device(s)", "efficiency",
                           "exchange ms", "device: ", "note: efficiency = "}) {
    CAPTURE(text);
    CHECK_MESSAGE(r.output.find(text) != std::string::npos, r.output);
  }
  r = run_command(fmt::format("{} {} --devices 0,0 --json 2>/dev/null", anycl_cli(), kBench));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  parallel_row(r.output, 2);

  CHECK(run_command(fmt::format("{} bench gemm --devices 0,0", anycl_cli())).exit_code == 2);
  r = run_command(fmt::format("{} {} --devices 0,nosuch", anycl_cli(), kBench));
  CHECK(r.exit_code == 2);
  CHECK(r.output.find("--devices") != std::string::npos);
}

TEST_CASE("two MPI ranks bench and train with auto split and only rank 0 prints") {
  if (!have_mpi()) {
    ANYCL_SKIP_TEST(Missing::installed_by_setup,
                    "no mpirun or anycl built without MPI (install libopenmpi-dev openmpi-bin and rebuild)");
  }
  auto r =
      run_command(fmt::format("{} {} {} --distributed --json 2>/dev/null", kMpirun, anycl_cli(), kBench));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  parallel_row(r.output, 2);  // one JSON object: rank 1 printed nothing

  // Auto shares are per replica of the world and must agree on both ranks, or training would not
  // follow the single-device run.
  anycl::test::TempDir dir;
  r = run_command(fmt::format("{} {} --metrics {}", anycl_cli(), kRun, dir.file("one.csv")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  r = run_command(fmt::format("{} {} {} --distributed --split auto --metrics {}", kMpirun, anycl_cli(), kRun,
                              dir.file("mpi.csv")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  check_same_training(dir.file("mpi.csv"), dir.file("one.csv"));
  CHECK(count_of(r.output, "split: auto") == 1);
  r = run_command(fmt::format("{} {} {} --distributed --split 1:2:3", kMpirun, anycl_cli(), kRun));
  CHECK(r.exit_code != 0);
  CHECK_MESSAGE(r.output.find("one per replica (2)") != std::string::npos, r.output);
}

TEST_SUITE_END();
