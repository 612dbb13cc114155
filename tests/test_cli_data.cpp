// Data-set faults through the anycl command: a class without a training sample stops `anycl train`
// (and --classes states the count), and `anycl eval` needs no training files.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <filesystem>
#include <string>

#include "data_files.hpp"
#include "helpers.hpp"

using namespace anycl::test;

TEST_SUITE_BEGIN("cli");  // the anycl command as a child process (a CTest label: tests/CMakeLists.txt)

TEST_CASE(
    "anycl train stops when labels leave a class without a training sample - --classes states the count") {
  TempDir tmp;
  const std::string d = tmp.path();
  TinySpec spec;
  spec.train = 100;
  TinySet set = write_mnist_folder(d, spec);
  set.train_labels[17] = 255;  // one corrupt label among 0-9
  write_file(tmp.file("train-labels-idx1-ubyte"), idx_bytes({100}, set.train_labels));
  const std::string cli =
      fmt::format("{} train --data {} --layers 8 --epochs 1 --batch 10 --quiet", anycl_cli(), d);
  auto r = run_command(cli);
  CHECK(r.exit_code == 1);
  CHECK_MESSAGE(contains_all(r.output, {"no training sample", "255", "--classes N"}), r.output);
  r = run_command(cli + " --classes 256");
  CHECK_MESSAGE(r.exit_code == 0, r.output);
  r = run_command(cli + " --classes 1");
  CHECK_MESSAGE(contains_all(r.output, {"--classes"}), r.output);
  CHECK(r.exit_code == 2);
}

TEST_CASE("anycl eval needs no training files") {
  TempDir tmp;
  const std::string d = tmp.path();
  write_mnist_folder(d);
  const std::string cli = anycl_cli();
  auto r = run_command(
      fmt::format("{} train --data {} --layers 8 --epochs 1 --batch 4 --quiet --save {}/m.anycl", cli, d, d));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  std::filesystem::remove(tmp.file("train-images-idx3-ubyte"));
  std::filesystem::remove(tmp.file("train-labels-idx1-ubyte"));
  r = run_command(fmt::format("{} eval --data {} --model {}/m.anycl", cli, d, d));
  CHECK_MESSAGE(r.exit_code == 0, r.output);
}

TEST_SUITE_END();
