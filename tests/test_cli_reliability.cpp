// `anycl train` under every kind of mistake and accident: damaged data files and model files
// exit 1 naming the file and leave no output behind; a batch the device cannot hold says how much
// memory; SIGKILL at random points and resuming gives the uninterrupted run's weights bit for bit;
// SIGINT/SIGTERM exit 130/143 with a resumable checkpoint (the guard: test_cli_train_safety.cpp).
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <csignal>

#include <anycl/train/checkpoint.hpp>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <thread>

#include "background.hpp"
#include "data_files.hpp"
#include "helpers.hpp"

using anycl::test::anycl_cli;
using anycl::test::Background;
using anycl::test::contains_all;
using anycl::test::run_command;
using anycl::test::slurp;
using anycl::test::TempDir;
using anycl::test::wait_for_file;
namespace fs = std::filesystem;

namespace {

// The per-epoch figures of a metrics CSV without the timing columns.
std::vector<std::string> csv_figures(const std::string& path) {
  std::vector<std::string> rows;
  std::istringstream lines(slurp(path));
  for (std::string line; std::getline(lines, line);) {
    size_t cut = 0;
    for (int comma = 0; comma < 5 && cut != std::string::npos; ++comma) cut = line.find(',', cut + 1);
    rows.push_back(line.substr(0, cut));
  }
  return rows;
}

const std::string kSmallRun = "--limit 6000 --batch 50 --layers 64 --epochs 3 --optimizer adam --seed 3";

}  // namespace

TEST_SUITE_BEGIN("cli");  // the anycl command as a child process (a CTest label: tests/CMakeLists.txt)

TEST_CASE("damaged data files exit 1 naming the file and leave no output files") {
  TempDir data, out;
  using anycl::test::idx_bytes;
  using anycl::test::write_file;
  struct Case {
    const char* what;
    const char* file;
    std::vector<uint8_t> bytes;
  };
  const auto images = idx_bytes({12, 4, 3}, anycl::test::random_bytes(144, 9));
  const std::vector<Case> cases = {
      {"wrong magic", "train-images-idx3-ubyte", {0x12, 0x34, 0x08, 0x03, 0, 0, 0, 1}},
      {"wrong dimension count", "train-images-idx3-ubyte",
       idx_bytes({12, 12}, anycl::test::random_bytes(144, 9))},
      {"truncated header", "train-images-idx3-ubyte", {images.begin(), images.begin() + 6}},
      {"truncated body", "train-images-idx3-ubyte", {images.begin(), images.end() - 5}},
      {"count mismatch", "train-labels-idx1-ubyte", idx_bytes({11}, anycl::test::random_bytes(11, 3, 10))},
      {"label out of range", "t10k-labels-idx1-ubyte", idx_bytes({5}, {1, 2, 70, 3, 4})},
      {"absurd dimensions", "train-images-idx3-ubyte", idx_bytes({0xFFFFFFFF, 0xFFFFFF, 0xFFFFFF}, {})},
      {"empty file", "t10k-images-idx3-ubyte", {}},
      {"random bytes", "train-labels-idx1-ubyte", anycl::test::random_bytes(300, 17)},
      {"missing file", "t10k-labels-idx1-ubyte", {}},
      {"corrupt gzip", "train-images-idx3-ubyte", {}},
  };
  for (const Case& c : cases) {
    CAPTURE(c.what);
    fs::remove_all(data.path());
    fs::create_directories(data.path());
    anycl::test::write_mnist_folder(data.path());
    const std::string file = data.file(c.file);
    std::string named = c.file;
    if (std::string(c.what) == "missing file") {
      fs::remove(file);
    } else if (std::string(c.what) == "corrupt gzip") {
      auto gz = anycl::test::gzip_bytes(images);
      gz[gz.size() / 2] ^= 0xFF;
      gz.resize(gz.size() - 4);
      fs::remove(file);
      write_file(file + ".gz", gz);
      named += ".gz";
    } else {
      write_file(file, c.bytes);
    }
    const auto r = run_command(
        fmt::format("{} train --data {} --epochs 1 --save {} --metrics {} --checkpoint {}", anycl_cli(),
                    data.path(), out.file("m.anycl"), out.file("r.csv"), out.file("ck")));
    CHECK(r.exit_code == 1);
    CHECK_MESSAGE(r.output.find(named) != std::string::npos, r.output);
    CHECK_MESSAGE(r.output.find("error:") != std::string::npos, r.output);
    CHECK_MESSAGE(fs::is_empty(out.path()), "output left behind after ", c.what);
  }
}

TEST_CASE("damaged model files and a model that does not fit the data exit 1") {
  TempDir dir;
  const std::string model = dir.file("m.anycl");
  auto r = run_command(
      fmt::format("{} train --limit 100 --epochs 1 --layers 8 --quiet --save {}", anycl_cli(), model));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const std::string good = slurp(model);
  auto eval_with = [&](const std::string& bytes) {
    std::ofstream(dir.file("bad.anycl"), std::ios::binary) << bytes;
    return run_command(fmt::format("{} eval --model {}", anycl_cli(), dir.file("bad.anycl")));
  };
  std::string flipped = good, newer = good;
  flipped[good.size() / 2] = char(flipped[good.size() / 2] ^ 0x40);
  newer[8] = 7;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"epoch,train_loss\n1,0.5\n", "not an anycl model file"},
      {good.substr(0, good.size() / 2), "truncated"},
      {flipped, "checksum"},
      {newer, "checksum"},  // a flipped version byte is corruption, not a newer format
      {"", "not an anycl model file"},
  };
  for (const auto& item : cases) {
    const auto& bytes = item.first;
    const auto& words = item.second;
    CAPTURE(words);
    r = eval_with(bytes);
    CHECK(r.exit_code == 1);
    CHECK_MESSAGE(contains_all(r.output, {"bad.anycl", words}), r.output);
  }
  // A model for 4×3 images does not fit Fashion-MNIST's 28×28.
  TempDir tiny;
  anycl::test::write_mnist_folder(tiny.path());
  r = run_command(fmt::format("{} train --data {} --epochs 1 --layers 4 --quiet --save {}", anycl_cli(),
                              tiny.path(), dir.file("tiny.anycl")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  r = run_command(fmt::format("{} eval --model {}", anycl_cli(), dir.file("tiny.anycl")));
  CHECK(r.exit_code == 1);
  CHECK_MESSAGE(contains_all(r.output, {"12", "784"}), r.output);
}

TEST_CASE("a batch too large for the device names asked and available memory") {
  TempDir out;
  const auto r = run_command(fmt::format("{} train --limit 100 --epochs 1 --batch 50000000 --save {}",
                                         anycl_cli(), out.file("m.anycl")));
  CHECK(r.exit_code == 1);
  CHECK_MESSAGE(contains_all(r.output, {"MiB", "50000000", "use a smaller batch"}), r.output);
  CHECK(fs::is_empty(out.path()));
}

TEST_CASE("checkpoint flags are checked before training") {
  TempDir dir;
  const std::vector<std::pair<std::string, std::string>> usage = {
      {"--checkpoint-every 5", "--checkpoint-every needs --checkpoint"},
      {"--checkpoint " + dir.file("c") + " --checkpoint-every 0", "--checkpoint-every"},
      {"--checkpoint", "--checkpoint needs a value"},
  };
  anycl::test::expect_train_usage_errors(usage);
  const auto r = run_command(fmt::format("{} train --resume {}", anycl_cli(), dir.file("nowhere")));
  CHECK(r.exit_code == 1);
  CHECK_MESSAGE(contains_all(r.output, {"cannot open checkpoint", "nowhere"}), r.output);
}

TEST_CASE("SIGKILL at random points then resume gives bit-identical final weights") {
  TempDir dir;
  const std::string base = fmt::format("{} train {} --quiet", anycl_cli(), kSmallRun);
  auto r = run_command(
      fmt::format("{} --save {} --metrics {}", base, dir.file("whole.anycl"), dir.file("whole.csv")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);

  const std::string ck = dir.file("ck"), file = ck + "/checkpoint.anyclckpt";
  const std::string fresh = fmt::format("{} --checkpoint {} --checkpoint-every 4 --save {} --metrics {}",
                                        base, ck, dir.file("resumed.anycl"), dir.file("resumed.csv"));
  // Outputs come from the command line only, never from the checkpoint: the resume names them again.
  const std::string resume = fmt::format("{} train --resume {} --save {} --metrics {}", anycl_cli(), ck,
                                         dir.file("resumed.anycl"), dir.file("resumed.csv"));
  std::mt19937 rng(2024);
  std::uniform_int_distribution<int> delay_ms(200, 1600);
  int kills = 0;
  for (int attempt = 0; attempt < 5; ++attempt) {
    Background run(fs::exists(file) ? resume : fresh, dir.file("log.txt"));
    std::this_thread::sleep_for(std::chrono::milliseconds(delay_ms(rng)));
    run.signal(anycl::test::kSigKill);
    const int code = run.wait();
    if (code == 128 + anycl::test::kSigKill) ++kills;
    INFO(slurp(dir.file("log.txt")));
    CHECK((code == 0 || code == 128 + anycl::test::kSigKill));
    if (code == 0) break;
    if (fs::exists(file)) CHECK_NOTHROW(anycl::read_checkpoint(file));  // the last good one survived
  }
  MESSAGE("killed ", kills, " times");
  r = run_command(fs::exists(file) ? resume : fresh);
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(slurp(dir.file("resumed.anycl")) == slurp(dir.file("whole.anycl")));
  CHECK(csv_figures(dir.file("resumed.csv")) == csv_figures(dir.file("whole.csv")));
}

TEST_CASE("SIGINT and SIGTERM finish the step and leave a resumable checkpoint") {
  TempDir dir;
  for (const int sig : {SIGINT, SIGTERM}) {
    CAPTURE(sig);
    const std::string ck = dir.file(fmt::format("ck{}", sig)), file = ck + "/checkpoint.anyclckpt";
    Background run(fmt::format("{} train --limit 3000 --batch 20 --layers 16 --epochs 1000 --checkpoint {} "
                               "--checkpoint-every 3",
                               anycl_cli(), ck),
                   dir.file("log.txt"));
    REQUIRE(wait_for_file(file));
    run.signal(sig);
    const int code = run.wait();
    const std::string log = slurp(dir.file("log.txt"));
    CHECK_MESSAGE(code == 128 + sig, log);
    CHECK_MESSAGE(contains_all(log, {sig == SIGINT ? "SIGINT" : "SIGTERM", "anycl train --resume " + ck}),
                  log);
    const anycl::Checkpoint c = anycl::read_checkpoint(file);
    const auto r =
        run_command(fmt::format("{} train --resume {} --epochs {} --quiet", anycl_cli(), ck, c.epoch + 1));
    CHECK_MESSAGE(r.exit_code == 0, r.output);
    CHECK_MESSAGE(r.output.find("Test accuracy") != std::string::npos, r.output);
  }
  // Without --checkpoint the message says how to get one.
  Background run(fmt::format("{} train --limit 3000 --batch 20 --layers 16 --epochs 1000 --metrics {}",
                             anycl_cli(), dir.file("m.csv")),
                 dir.file("log.txt"));
  REQUIRE(wait_for_file(dir.file("m.csv")));
  run.signal(SIGINT);
  CHECK(run.wait() == 130);
  CHECK_MESSAGE(contains_all(slurp(dir.file("log.txt")), {"no checkpoint", "--checkpoint DIR"}),
                slurp(dir.file("log.txt")));
}

TEST_CASE("resume refuses a flag that would change the run") {
  TempDir dir;
  const std::string ck = dir.file("ck");
  auto r = run_command(
      fmt::format("{} train --limit 200 --layers 8 --epochs 1 --quiet --checkpoint {}", anycl_cli(), ck));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  r = run_command(fmt::format("{} train --resume {} --batch 64", anycl_cli(), ck));
  CHECK(r.exit_code == 2);
  CHECK_MESSAGE(contains_all(r.output, {"--batch 64", "differs from the checkpoint"}), r.output);
  auto bytes = slurp(ck + "/checkpoint.anyclckpt");
  bytes[bytes.size() / 2] = char(bytes[bytes.size() / 2] ^ 1);
  std::ofstream(ck + "/checkpoint.anyclckpt", std::ios::binary) << bytes;
  r = run_command(fmt::format("{} train --resume {} --epochs 2", anycl_cli(), ck));
  CHECK(r.exit_code == 1);
  CHECK_MESSAGE(contains_all(r.output, {"checkpoint.anyclckpt", "checksum"}), r.output);
}

TEST_CASE("two processes sharing a fresh kernel cache and tuning folder train as one alone does") {
  TempDir dir;
  const std::string run =
      fmt::format("ANYCL_CACHE_DIR={} {} train --limit 512 --epochs 2 --layers 32 --seed 9 --quiet --metrics",
                  dir.file("cache"), anycl_cli());
  // Both start on an empty cache, so both compile and write the same entries at the same time.
  const auto r =
      run_command(fmt::format("{0} {1} & {0} {2}; wait $!", run, dir.file("a.csv"), dir.file("b.csv")));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  REQUIRE(run_command(fmt::format("{} {}", run, dir.file("alone.csv"))).exit_code == 0);
  auto losses = [&](const std::string& name) {  // the metric columns, without timing
    std::istringstream rows(slurp(dir.file(name)));
    std::string row, out;
    while (std::getline(rows, row)) out += row.substr(0, row.rfind(',', row.rfind(',') - 1)) + "\n";
    return out;
  };
  CHECK(losses("a.csv") == losses("alone.csv"));
  CHECK(losses("b.csv") == losses("alone.csv"));
  CHECK(losses("alone.csv").size() > 40);
  size_t entries = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.file("cache"))) {
    CHECK_MESSAGE(e.path().string().find(".tmp.") == std::string::npos, e.path());  // no torn temporaries
    ++entries;
  }
  CHECK(entries > 0);
}

TEST_SUITE_END();
