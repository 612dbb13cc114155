// The file guarantees of docs/guarantees.md through the anycl command, as a hostile user would test
// them: FIFOs and devices as inputs, devices, FIFOs and links as outputs, an output that is the input,
// links planted at temporary names, concurrent writers, and failed runs that must cost no earlier file.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "data_files.hpp"
#include "helpers.hpp"
#include "hostile_files.hpp"

using anycl::test::anycl_cli;
using anycl::test::contains_all;
using anycl::test::run_command;
using anycl::test::slurp;
using anycl::test::TempDir;
namespace fs = std::filesystem;

namespace {

void put(const std::string& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

const char* kMetrics =
    "epoch,train_loss,train_acc,test_loss,test_acc\n1,0.9,0.6,0.8,0.65\n2,0.5,0.8,0.6,0.75\n";

// Runs `anycl ARGS` under a time limit, so a hang fails the test (exit 124) instead of stalling it.
anycl::test::CommandResult run_cli(const std::string& args) {
  return run_command(fmt::format("timeout 120 {} {}", anycl_cli(), args));
}

// Each `anycl ARGS` exits 1 with every one of its words in the output.
void expect_refused(const std::vector<std::pair<std::string, std::vector<std::string>>>& cases) {
  for (const auto& item : cases) {
    const std::string& args = item.first;  // a named variable: the CHECK macros' lambdas need one
    const std::vector<std::string>& words = item.second;
    const auto r = run_cli(args);
    CHECK_MESSAGE(r.exit_code == 1, args, "\n", r.output);
    // A build without ONNX export (the sanitizer build) refuses `export` before reading its input.
    if (r.output.find("built without ONNX export") != std::string::npos) continue;
    for (const auto& w : words) CHECK_MESSAGE(r.output.find(w) != std::string::npos, args, "\n", r.output);
  }
}

}  // namespace

TEST_SUITE_BEGIN("cli");  // the anycl command as a child process (a CTest label: tests/CMakeLists.txt)

TEST_CASE("FIFOs given as input files are refused at once naming the file") {
  TempDir dir;
  const std::string fifo = dir.file("input"), csv = dir.file("run.csv");
  if (!anycl::test::make_fifo(fifo)) ANYCL_SKIP_TEST(Missing::capability, "no FIFOs on this system");
  REQUIRE(anycl::test::make_fifo(csv));
  fs::create_directory(dir.file("data"));
  anycl::test::write_mnist_folder(dir.file("data"));
  for (const std::string& args :
       {fmt::format("eval --model {}", fifo),
        fmt::format("export --model {} --onnx {}", fifo, dir.file("m.onnx")),
        fmt::format("plot {} -o {}", csv, dir.file("p.svg")),
        fmt::format("train --data {} --layers 8 --epochs 1 --resume {}", dir.file("data"), fifo)}) {
    const auto r = run_cli(args);
    CHECK_MESSAGE(r.exit_code == 1, args, "\n", r.output);
    // A build without ONNX export (the sanitizer build) refuses `export` before reading its input.
    if (r.output.find("built without ONNX export") != std::string::npos) continue;
    CHECK_MESSAGE(contains_all(r.output, {"FIFO", "not a regular file"}), args, "\n", r.output);
  }
  CHECK(fs::is_fifo(fifo));
  CHECK_FALSE(fs::exists(dir.file("m.onnx")));
  CHECK_FALSE(fs::exists(dir.file("p.svg")));
}

TEST_CASE("devices and huge files given as input files are refused naming the file") {
  TempDir dir;
  fs::create_directory(dir.file("data"));
  anycl::test::write_mnist_folder(dir.file("data"));
  const std::string big = dir.file("big.anycl");
  put(big, "");
  fs::resize_file(big, uint64_t{5} << 30);  // sparse
  expect_refused({{"eval --model /dev/zero", {"/dev/zero", "character device"}},
                  {fmt::format("export --model /dev/urandom --onnx {}", dir.file("m.onnx")),
                   {"/dev/urandom", "character device"}},
                  {fmt::format("train --data {} --layers 8 --epochs 1 --resume /dev/zero", dir.file("data")),
                   {"/dev/zero", "character device"}},
                  {fmt::format("eval --model {}", big), {big, "too large", "5.0 GiB"}},
                  {fmt::format("eval --model {}", dir.path()), {dir.path(), "directory"}}});
}

TEST_CASE("outputs that are devices FIFOs or folders are refused and left as they were") {
  TempDir dir;
  const std::string csv = dir.file("run.csv"), null_link = dir.file("null.svg"), fifo = dir.file("out.onnx");
  put(csv, kMetrics);
  put(dir.file("m.anycl"), "not a model");
  if (!anycl::test::make_fifo(fifo)) ANYCL_SKIP_TEST(Missing::capability, "no FIFOs on this system");
  fs::create_symlink("/dev/null", null_link);
  fs::create_directory(dir.file("data"));
  anycl::test::write_mnist_folder(dir.file("data"));
  expect_refused(
      {{fmt::format("plot {} -o {}", csv, null_link), {null_link, "character device"}},
       {fmt::format("plot {} -o {}", csv, dir.path()), {"directory"}},
       {fmt::format("export --model {} --onnx {}", dir.file("m.anycl"), fifo), {fifo, "FIFO"}},
       {fmt::format("train --data {} --layers 8 --epochs 1 --quiet --save {}", dir.file("data"), fifo),
        {fifo, "FIFO"}},
       {fmt::format("plot {} -o {}", csv, dir.file("no/such/folder.svg")), {"does not exist"}}});
  CHECK(fs::is_symlink(null_link));
  CHECK(fs::is_character_file("/dev/null"));
  CHECK(fs::is_fifo(fifo));
  // Output paths are checked before any work: a missing --save folder is not found after training.
  const auto r = run_cli(fmt::format("train --data {} --layers 8 --epochs 1 --save {}", dir.file("data"),
                                     dir.file("missing/m.anycl")));
  CHECK(r.exit_code == 1);
  CHECK_MESSAGE(contains_all(r.output, {"missing", "does not exist"}), r.output);
  CHECK_MESSAGE(r.output.find("Test loss") == std::string::npos, r.output);
  // Nor a folder that exists but takes no new files (procfs: a regular file there, but no file can be
  // created beside it): refused before training, not after it.
  if (fs::is_regular_file("/proc/version")) {
    const auto proc =
        run_cli(fmt::format("train --data {} --layers 8 --epochs 1 --save /proc/version", dir.file("data")));
    CHECK(proc.exit_code == 1);
    CHECK_MESSAGE(contains_all(proc.output, {"/proc/version", "takes no new files"}), proc.output);
    CHECK_MESSAGE(proc.output.find("Test loss") == std::string::npos, proc.output);
  }
}

TEST_CASE("plot and export refuse to overwrite their own input") {
  TempDir dir;
  const std::string csv = dir.file("run.csv"), model = dir.file("m.anycl");
  put(csv, kMetrics);
  put(model, "model bytes");
  auto r = run_cli(fmt::format("plot {} -o {}", csv, csv));
  CHECK(r.exit_code == 1);
  CHECK_MESSAGE(contains_all(r.output, {"is the input", csv}), r.output);
  CHECK(slurp(csv) == kMetrics);
  r = run_cli(fmt::format("export --model {} --onnx {}/./m.anycl", model, dir.path()));
  CHECK(r.exit_code == 1);
  CHECK_MESSAGE(contains_all(r.output, {"is the input", model}), r.output);
  CHECK(slurp(model) == "model bytes");
}

TEST_CASE("plot never follows a link planted at its temporary name - concurrent plots each finish whole") {
  TempDir dir;
  const std::string csv = dir.file("run.csv"), svg = dir.file("p.svg"), victim = dir.file("victim");
  put(csv, kMetrics);
  put(victim, "precious");
  fs::create_symlink(victim, svg + ".tmp");  // the fixed name plot used to write through
  auto r = run_cli(fmt::format("plot {} -o {}", csv, svg));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(slurp(victim) == "precious");
  CHECK(slurp(svg).find("</svg>") != std::string::npos);

  // Six plots of one file at once: all succeed and the file is one whole SVG.
  r =
      run_command(fmt::format("pids=; for i in 1 2 3 4 5 6; do timeout 120 {0} plot {1} -o {2} --title run$i "
                              "& pids=\"$pids $!\"; done; "
                              "rc=0; for p in $pids; do wait $p || rc=1; done; exit $rc",
                              anycl_cli(), csv, dir.file("same.svg")));
  CHECK_MESSAGE(r.exit_code == 0, r.output);
  const std::string same = slurp(dir.file("same.svg"));
  CHECK(same.rfind("<?xml", 0) == 0);
  CHECK(same.find("</svg>\n") == same.size() - 7);
  size_t temporaries = 0;
  for (const auto& e : fs::directory_iterator(dir.path()))
    temporaries += e.path().filename().string().find(".tmp.") != std::string::npos;
  CHECK(temporaries == 0);
}

TEST_CASE("a run that fails before its first epoch keeps the earlier metrics file") {
  TempDir dir;
  const std::string metrics = dir.file("run.csv");
  put(metrics, kMetrics);
  // sgd at lr 10 diverges inside the first epoch: the numerical guard stops the run.
  const auto r = run_cli(fmt::format(
      "train --limit 2000 --batch 20 --layers 64,64 --activation linear --dropout 0 --optimizer sgd --lr 10 "
      "--epochs 2 --quiet --metrics {}",
      metrics));
  CHECK_MESSAGE(r.exit_code == 1, r.output);
  CHECK(slurp(metrics) == kMetrics);
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(dir.path())) ++entries;
  CHECK(entries == 1);
}

TEST_CASE("messages name the real cause - links - cache folder - stdout - usage") {
  TempDir dir;
  const std::string data = dir.file("data");
  fs::create_directory(data);
  anycl::test::write_mnist_folder(data);
  fs::remove(data + "/train-images-idx3-ubyte");
  fs::create_symlink(dir.file("gone"), data + "/train-images-idx3-ubyte");
  auto r = run_cli(fmt::format("train --data {} --layers 8 --epochs 1", data));
  CHECK(r.exit_code == 1);
  CHECK_MESSAGE(contains_all(r.output, {"train-images-idx3-ubyte", "link to", "gone", "does not exist"}),
                r.output);

  // `anycl` alone is a mistake: usage on stderr, exit 2; output that cannot be written is a failure.
  r = run_command(fmt::format("({} 2>/dev/null)", anycl_cli()));
  CHECK(r.exit_code == 2);
  CHECK(r.output.empty());
  r = run_command(fmt::format("({} devices >/dev/full)", anycl_cli()));
  CHECK(r.exit_code == 1);
  CHECK_MESSAGE(r.output.find("cannot write the output") != std::string::npos, r.output);
  r = run_cli("tune --measure " + dir.file("t.txt"));  // the worker's work is the library's now, not a flag
  CHECK(r.exit_code == 2);
  CHECK_MESSAGE(r.output.find("--measure") != std::string::npos, r.output);

  // The cache folder: unset HOME is not "ANYCL_CACHE=off"; a regular file is not "not created yet".
  r = run_command(fmt::format("env -u HOME -u XDG_CACHE_HOME -u ANYCL_CACHE_DIR -u ANYCL_CACHE {} cache info",
                              anycl_cli()));
  CHECK(r.exit_code == 2);
  CHECK_MESSAGE(contains_all(r.output, {"HOME", "ANYCL_CACHE_DIR"}), r.output);
  CHECK(r.output.find("ANYCL_CACHE=off") == std::string::npos);
  put(dir.file("cachefile"), "not a folder");
  for (const char* action : {"info", "warm"}) {
    r = run_command(
        fmt::format("ANYCL_CACHE_DIR={} {} cache {}", dir.file("cachefile"), anycl_cli(), action));
    CHECK_MESSAGE(r.exit_code == 1, action, r.output);
    CHECK_MESSAGE(contains_all(r.output, {"cachefile", "not a folder"}), r.output);
  }
}

TEST_SUITE_END();
