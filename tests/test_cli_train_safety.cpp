// `anycl train` exit paths and outputs: a failed plot costs neither the saved model nor leaves
// kernels running at exit; a stop signal in the last epoch is honoured after the current step; a
// checkpoint (even a crafted one) never chooses an output path or a flag; an exploding run keeps
// only a healthy checkpoint.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <signal.h>

#include <anycl/train/checkpoint.hpp>
#include <anycl/train/model_file.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include "background.hpp"
#include "data_files.hpp"
#include "hash.hpp"
#include "helpers.hpp"

using anycl::test::anycl_cli;
using anycl::test::contains_all;
using anycl::test::run_command;
using anycl::test::TempDir;
namespace fs = std::filesystem;

namespace {

const std::string kTiny = "--limit 600 --batch 50 --layers 16 --epochs 2 --seed 2";

// A format-1 checkpoint as anycl wrote it before run fields existed: no typed run lines in the
// state text, the command line in the application text — here a hostile one.
void write_old_style_checkpoint(const std::string& path, const anycl::Checkpoint& c, const std::string& app) {
  std::vector<unsigned char> bytes = anycl::encode_checkpoint(c);
  auto u32 = [&](size_t at) {
    return uint32_t(bytes[at]) | uint32_t(bytes[at + 1]) << 8 | uint32_t(bytes[at + 2]) << 16 |
           uint32_t(bytes[at + 3]) << 24;
  };
  auto put_u32 = [](std::vector<unsigned char>& out, size_t v) {
    for (int i = 0; i < 4; ++i) out.push_back(static_cast<unsigned char>((v >> (8 * i)) & 0xff));
  };
  const size_t state_at = 12, state_size = u32(state_at);
  const std::string state(bytes.begin() + long(state_at + 4),
                          bytes.begin() + long(state_at + 4 + state_size));
  const size_t app_at = state_at + 4 + state_size, app_size = u32(app_at);
  std::string old_state;
  for (size_t pos = 0; pos < state.size();) {
    const size_t end = state.find('\n', pos);
    const std::string line = state.substr(pos, end - pos + 1);
    const std::string key = line.substr(0, line.find(' '));
    if (key != "data_dir" && key != "limit" && key != "validation_split" && key != "num_classes" &&
        key != "shares" && key != "devices" && key != "epochs" && key != "checkpoint_every" &&
        key != "processes")
      old_state += line;
    pos = end + 1;
  }
  std::vector<unsigned char> out(bytes.begin(), bytes.begin() + long(state_at));
  put_u32(out, old_state.size());
  out.insert(out.end(), old_state.begin(), old_state.end());
  put_u32(out, app.size());
  out.insert(out.end(), app.begin(), app.end());
  out.insert(out.end(), bytes.begin() + long(app_at + 4 + app_size), bytes.end() - 8);
  const uint64_t sum = anycl::detail::fnv1a(out.data(), out.size());
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<unsigned char>((sum >> (8 * i)) & 0xff));
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(out.data()), long(out.size()));
}

}  // namespace

TEST_SUITE_BEGIN("cli");  // the anycl command as a child process (a CTest label: tests/CMakeLists.txt)

TEST_CASE("a failed plot costs neither the saved model nor leaves kernels running at exit") {
  TempDir dir;
  // Stopping inside the first epoch leaves no curve to plot: earlier versions plotted
  // before saving (losing the model) and exited while the device still ran (SIGSEGV under load).
  for (int attempt = 0; attempt < 4; ++attempt) {
    CAPTURE(attempt);
    fs::remove(dir.file("m.anycl"));
    const auto r = run_command(fmt::format("{} train {} --max-steps 3 --save {} --plot {} --quiet",
                                           anycl_cli(), kTiny, dir.file("m.anycl"), dir.file("curves.svg")));
    CHECK_MESSAGE(r.exit_code == 1, r.output);  // an error, not a crash (139) or success
    CHECK_MESSAGE(r.output.find("curves.svg") != std::string::npos, r.output);
    REQUIRE(fs::exists(dir.file("m.anycl")));
    CHECK_NOTHROW(anycl::read_model(dir.file("m.anycl")));
  }
}

TEST_CASE("SIGINT in the last epoch stops after the current step and not at the epoch's end") {
  TempDir dir;
  // One long epoch (3,750 steps) with a checkpoint every 1,000 steps. The first checkpoint's file
  // says training is under way at step 1,000; SIGINT then. The host may run only a few steps ahead
  // of the device, and a fast GPU runs on while the signal is sent (an H200: 134 steps), so the stop
  // comes some steps later, but before the next checkpoint. (Before, the host enqueued ahead until
  // the next blocking read — the next checkpoint, at step 2,000, or the epoch's end, where a stop
  // in the last epoch was lost and the run ended with exit 0.)
  const std::string ck = dir.file("ck"), file = ck + "/checkpoint.anyclckpt";
  anycl::test::Background run(
      fmt::format("{} train --batch 16 --layers 256,256 --epochs 1 --checkpoint {} --checkpoint-every 1000",
                  anycl_cli(), ck),
      dir.file("log.txt"));
  REQUIRE(anycl::test::wait_for_file(file));
  run.signal(SIGINT);
  const int code = run.wait();
  const std::string log = anycl::test::slurp(dir.file("log.txt"));
  REQUIRE_MESSAGE(code == 130, log);
  const anycl::Checkpoint c = anycl::read_checkpoint(file);
  CHECK(c.epoch == 0);
  CHECK(c.step_in_epoch >= 1000);
  CHECK_MESSAGE(c.step_in_epoch < 2000, "stopped at step ", c.step_in_epoch);
}

TEST_CASE("a checkpoint never chooses output paths or flags however it was written") {
  TempDir dir;
  const std::string ck = dir.file("ck");
  auto r = run_command(fmt::format("{} train {} --epochs 1 --quiet --checkpoint {}", anycl_cli(), kTiny, ck));
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const std::string file = ck + "/checkpoint.anyclckpt";
  anycl::Checkpoint c = anycl::read_checkpoint(file);
  CHECK(c.app.empty());  // anycl's CLI stores typed fields, no command line
  CHECK(c.run.limit == 600);
  CHECK(c.run.epochs == 1);
  // A crafted old-style checkpoint (valid checksum) whose recorded command line names outputs.
  const std::string evil =
      fmt::format("--limit\n600\n--save\n{}\n--metrics\n{}\n--plot\n{}\n--checkpoint\n{}\n--help\n",
                  dir.file("evil.anycl"), dir.file("evil.csv"), dir.file("evil.svg"), dir.file("evil-ck"));
  write_old_style_checkpoint(file, c, evil);
  const anycl::Checkpoint old = anycl::read_checkpoint(file);
  CHECK(old.run.limit == 600);  // the data fields are read from the recorded flags
  r = run_command(fmt::format("{} train --resume {} --epochs 2 --quiet", anycl_cli(), ck));
  CHECK_MESSAGE(r.exit_code == 0, r.output);
  CHECK_MESSAGE(r.output.find("Test accuracy") != std::string::npos, r.output);  // trained: no --help
  for (const char* name : {"evil.anycl", "evil.csv", "evil.svg", "evil-ck"})
    CHECK_FALSE(fs::exists(dir.file(name)));
}

TEST_CASE("an exploding run keeps only a healthy checkpoint which resumes with a lower rate") {
  TempDir dir;
  const std::string base =
      "--limit 2000 --batch 20 --layers 64,64 --activation linear --dropout 0 --optimizer sgd --epochs 2 "
      "--checkpoint-every 1 --quiet";
  // lr 0.3 explodes after a few steps: the guard stops it before the ruined weights replace the
  // last healthy checkpoint, and says which one that is.
  const std::string ck = dir.file("ck");
  auto r = run_command(fmt::format("{} train {} --lr 0.3 --checkpoint {}", anycl_cli(), base, ck));
  CHECK(r.exit_code == 1);
  CHECK_MESSAGE(contains_all(r.output, {"diverged", "last healthy checkpoint is kept", "--resume " + ck}),
                r.output);
  const anycl::Checkpoint c = anycl::read_checkpoint(ck + "/checkpoint.anyclckpt");
  float largest = 0;
  for (float w : c.model.parameters) largest = std::max(largest, std::fabs(w));
  CHECK(largest < 100.f);
  r = run_command(fmt::format("{} train --resume {} --lr 0.01 --epochs 1 --quiet", anycl_cli(), ck));
  CHECK_MESSAGE(r.exit_code == 0, r.output);
  // lr 10 ruins the weights in the first step: no checkpoint is ever written, and the message says so.
  const std::string none = dir.file("none");
  r = run_command(fmt::format("{} train {} --lr 10 --checkpoint {}", anycl_cli(), base, none));
  CHECK(r.exit_code == 1);
  CHECK_MESSAGE(contains_all(r.output, {"diverged", "no checkpoint was written"}), r.output);
  CHECK_FALSE(fs::exists(none + "/checkpoint.anyclckpt"));
}

TEST_SUITE_END();
