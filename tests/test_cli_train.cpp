// `anycl train`, `eval` and `predict` as a user runs them: the happy path end to end, and
// every bad flag answered with exit code 2 and a message naming the flag.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "helpers.hpp"

using anycl::test::anycl_cli;
using anycl::test::run_command;
using anycl::test::slurp;

namespace {
const std::string kTestImages = "/usr/share/datasets/fashion-mnist/t10k-images-idx3-ubyte.gz";

}  // namespace

TEST_SUITE_BEGIN("cli");  // the anycl command as a child process (a CTest label: tests/CMakeLists.txt)

TEST_CASE("train → save → eval → predict on Fashion-MNIST" * doctest::test_suite("cli-end-to-end")) {
  anycl::test::TempDir dir;
  const std::string model = dir.file("m.anycl"), csv = dir.file("run.csv"), jsonl = dir.file("run.jsonl");
  auto r = run_command(fmt::format("{} train --limit 600 --epochs 2 --layers 64 --save {} --metrics {}",
                                   anycl_cli(), model, csv));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(r.output.find("Total params: 50,890") != std::string::npos);  // 784·64+64 + 64·10+10
  CHECK(r.output.find("Epoch 2/2") != std::string::npos);
  CHECK(r.output.find("Test accuracy:") != std::string::npos);
  CHECK(r.output.find("0.0 blocking host waits") != std::string::npos);
  const std::string metrics = slurp(csv);
  CHECK(metrics.rfind("epoch,train_loss,train_acc,test_loss,test_acc,seconds,samples_per_s\n1,", 0) == 0);
  CHECK(std::count(metrics.begin(), metrics.end(), '\n') == 3);

  r = run_command(fmt::format("{} eval --model {}", anycl_cli(), model));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(r.output.find("10000 test samples") != std::string::npos);
  CHECK(r.output.find("confusion matrix") != std::string::npos);
  CHECK(r.output.find("class   9:") != std::string::npos);

  r = run_command(
      fmt::format("{} predict --model {} --images {} --first 3", anycl_cli(), model, kTestImages));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(r.output.find("image,class,probability\n0,") != std::string::npos);
  CHECK(r.output.find("\n2,") != std::string::npos);
  CHECK(r.output.find("\n3,") == std::string::npos);

  r = run_command(fmt::format(
      "{} train --limit 200 --epochs 1 --layers none --quiet --validation-split 0.25 --metrics {}",
      anycl_cli(), jsonl));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(slurp(jsonl).rfind("{\"epoch\": 1, \"train_loss\": ", 0) == 0);
  CHECK(slurp(jsonl).find("\"val_acc\"") != std::string::npos);
}

TEST_CASE("train --max-steps stops early and reports the time from process start to the first step" *
          doctest::test_suite("cli-end-to-end")) {
  const auto r = run_command(anycl_cli() + " train --limit 1000 --epochs 2 --layers 32 --max-steps 3");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(r.output.find("stopped after 3 training steps (--max-steps)") != std::string::npos);
  CHECK(r.output.find("Test accuracy:") != std::string::npos);  // evaluated as usual
  const auto at = r.output.find("start-up: first training step finished ");
  REQUIRE_MESSAGE(at != std::string::npos, r.output);
  const double seconds =
      std::stod(r.output.substr(at + std::string("start-up: first training step finished ").size()));
  CHECK(seconds > 0);
  CHECK(seconds < 600);
}

TEST_CASE("bad flags exit 2 and name the flag") {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--epochs 0", "--epochs"},
      {"--epochs -3", "--epochs"},
      {"--batch 0", "--batch"},
      {"--batch abc", "--batch"},
      {"--lr nan", "--lr"},
      {"--lr -0.1", "--lr"},
      {"--lr 1e9", "--lr"},
      {"--optimizer adagrad", "adagrad"},
      {"--activation swish", "swish"},
      {"--dropout 1", "--dropout"},
      {"--dropout -0.1", "--dropout"},
      {"--layers 512,0", "--layers"},
      {"--layers x", "--layers"},
      {"--bogus 1", "--bogus"},
      {"--device nosuch", "--device"},
      {"--validation-split 1", "--validation-split"},
      {"--metrics run.txt", "--metrics"},
      {"--epochs", "--epochs needs a value"},
      {"--max-steps 0", "--max-steps"},
  };
  anycl::test::expect_train_usage_errors(cases);
  CHECK(run_command(anycl_cli() + " eval").exit_code == 2);
  CHECK(run_command(anycl_cli() + " predict --model x").exit_code == 2);
}

TEST_CASE("a missing data folder or model exits 1 naming the path") {
  anycl::test::TempDir dir;
  auto r = run_command(fmt::format("{} train --data {}/nowhere --epochs 1", anycl_cli(), dir.path()));
  CHECK(r.exit_code == 1);
  CHECK_MESSAGE(r.output.find(dir.path() + "/nowhere") != std::string::npos, r.output);
  r = run_command(fmt::format("{} eval --model {}/none.anycl", anycl_cli(), dir.path()));
  CHECK(r.exit_code == 1);
  CHECK(r.output.find("none.anycl") != std::string::npos);
  r = run_command(
      fmt::format("{} predict --model {}/none.anycl --images {}", anycl_cli(), dir.path(), kTestImages));
  CHECK(r.exit_code == 1);
  CHECK(std::filesystem::is_empty(dir.path()));
}

TEST_SUITE_END();
