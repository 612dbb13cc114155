// CLBlast tuning files: a round trip through the file, corrupt or truncated files refused (and a
// Runtime starting beside one keeps working), parameters applied with OverrideParameters leave
// GEMM exact, and `anycl tune --show/--reset` and `anycl bench` as a user calls them.
#include <clblast.h>
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <anycl/blas/blas.hpp>
#include <anycl/blas/tuning.hpp>
#include <anycl/error.hpp>
#include <anycl/nn/sequential.hpp>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>

#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <tuple>
#include <unordered_map>

#include "blas/clblast_params.hpp"
#include "blas/gemm_plan.hpp"
#include "blas/tuning/tuning_check.hpp"
#include "data_files.hpp"
#include "gemm_exact.hpp"
#include "helpers.hpp"
#include "hostile_files.hpp"
#include "reference/gemm.hpp"
#include "util/process.hpp"

namespace {

anycl::GemmTuning sample_tuning() {
  anycl::GemmTuning t;
  t.device = "Some Device";
  t.driver = "1.2.3";
  t.seconds = 12.5;
  t.kernels["GemmRoutine"] = {{"XGEMM_MIN_INDIRECT_SIZE", 384}};
  t.kernels["XgemmDirect"] = {{"KWGD", 16}, {"MDIMCD", 8}, {"VWMD", 4}};
  return t;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void write(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

void check_gemm_exact(size_t m, size_t n, size_t k) {
  anycl::test::check_gemm_exact(anycl::test::runtime(), m, n, k);
}

// CLBlast's current parameters for a kernel family on the test device.
std::map<std::string, size_t> current_parameters(const std::string& kernel) {
  std::map<std::string, size_t> params;
  REQUIRE(anycl::detail::clblast_params::retrieve(anycl::test::runtime().info().id, kernel, params) ==
          clblast::StatusCode::kSuccess);
  return params;
}

}  // namespace

TEST_CASE("a tuning file round-trips and names the device by the kernel cache key") {
  anycl::test::TempDir dir;
  const std::string path = dir.file("t.txt");
  anycl::save_tuning(path, sample_tuning());
  std::string why;
  const auto back = anycl::load_tuning(path, &why);
  REQUIRE_MESSAGE(back, why);
  CHECK(back->kernels == sample_tuning().kernels);
  CHECK(back->device == "Some Device");
  CHECK(back->driver == "1.2.3");
  CHECK(back->seconds == doctest::Approx(12.5));
  // A choice line at "none" (the database's anyclConvDwXgemm where an entry names no dW set) is left
  // out: the file loads, and applying it sets the same (absent is none).
  anycl::GemmTuning with_none = sample_tuning();
  with_none.kernels["anyclConvDwXgemm"] = {};
  anycl::save_tuning(path, with_none);
  const auto none_back = anycl::load_tuning(path, &why);
  REQUIRE_MESSAGE(none_back, why);
  CHECK(none_back->kernels == sample_tuning().kernels);

  anycl::DeviceInfo d = anycl::test::runtime().info();
  const std::string p1 = anycl::tuning_file_path(d);
  d.driver_version += "-new";
  const std::string p2 = anycl::tuning_file_path(d);
  CHECK(p1 != p2);  // a new driver means a new file: old parameters are never applied to it
  CHECK(p1.find("clblast-tuning-") != std::string::npos);
}

TEST_CASE("corrupt truncated or missing tuning files are refused with a reason") {
  anycl::test::TempDir dir;
  const std::string path = dir.file("t.txt");
  std::string why;
  CHECK(!anycl::load_tuning(dir.file("missing.txt"), &why));
  CHECK(why.find("no tuning file") != std::string::npos);

  anycl::save_tuning(path, sample_tuning());
  const std::string good = slurp(path);
  write(path, good.substr(0, good.size() / 2));
  CHECK(!anycl::load_tuning(path, &why));

  std::string flipped = good;
  flipped[flipped.find("384")] = '9';  // a plausible but wrong value: caught by the checksum
  write(path, flipped);
  CHECK(!anycl::load_tuning(path, &why));
  CHECK(why.find("checksum") != std::string::npos);

  write(path, "garbage\n");
  CHECK(!anycl::load_tuning(path, &why));
  write(path, "");
  CHECK(!anycl::load_tuning(path, &why));
}

TEST_CASE("a runtime beside a corrupt tuning file starts and logs that it ignored it") {
  anycl::test::TempDir dir;
  anycl::test::seeded_kernel_cache(dir.path());
  const std::string cli = fmt::format("ANYCL_CACHE_DIR={} {}", dir.path(), anycl::test::anycl_cli());
  const auto r0 = anycl::test::run_command(cli + " tune --show");
  REQUIRE_MESSAGE(r0.exit_code == 0, r0.output);
  CHECK(r0.output.find("no usable tuning") != std::string::npos);
  // The file `tune --show` would read: its name is on the line it printed.
  const auto start = r0.output.find(dir.path());
  REQUIRE(start != std::string::npos);
  const std::string path = r0.output.substr(start, r0.output.find(".txt", start) + 4 - start);
  write(path, "anycl-clblast-tuning 1\nkernel Xgemm KWG=\n");
  const auto r = anycl::test::run_command(cli + " devices --verbose");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK_MESSAGE(r.output.find("CLBlast tuning ignored") != std::string::npos, r.output);

  const auto reset = anycl::test::run_command(cli + " tune --reset");
  CHECK(reset.exit_code == 0);
  CHECK(!std::filesystem::exists(path));
}

TEST_CASE("overridden CLBlast parameters keep GEMM exact - direct and indirect") {
  auto& rt = anycl::test::runtime();
  anycl::GemmTuning t;
  t.kernels["GemmRoutine"] = {{"XGEMM_MIN_INDIRECT_SIZE", 1}};  // always the indirect kernel
  anycl::apply_tuning(rt, t);
  check_gemm_exact(65, 31, 7);
  check_gemm_exact(128, 10, 512);
  t.kernels["GemmRoutine"] = {{"XGEMM_MIN_INDIRECT_SIZE", 1 << 20}};  // always the direct kernel
  anycl::apply_tuning(rt, t);
  check_gemm_exact(65, 31, 7);
  check_gemm_exact(128, 10, 512);

  anycl::GemmTuning incomplete;
  incomplete.kernels["Xgemm"] = {{"KWG", 16}};
  CHECK_THROWS_WITH_AS(anycl::apply_tuning(rt, incomplete), doctest::Contains("Xgemm lacks the parameter"),
                       anycl::ValidationError);
}

TEST_CASE("tuning continues an interrupted run - finished stages are kept and each stage is reported") {
  auto& rt = anycl::test::runtime();
  anycl::TuneOptions options;
  options.earlier.kernels["XgemmDirect"] = current_parameters("XgemmDirect");
  options.earlier.kernels["Xgemm"] = current_parameters("Xgemm");
  options.earlier.seconds = 100;
  CHECK(!anycl::tuning_complete(options.earlier));
  options.shapes = {
      {"a", false, false, 64, 32, 16}, {"b", true, false, 32, 48, 64}, {"c", false, true, 96, 8, 40}};
  std::vector<anycl::GemmTuning> stored;
  std::vector<std::string> lines;
  options.stage_done = [&](const anycl::GemmTuning& t) { stored.push_back(t); };
  options.progress = [&](const std::string& line) { lines.push_back(line); };
  const anycl::GemmTuning t = anycl::tune_gemm(rt, options);

  REQUIRE(stored.size() == 1);  // only the switch stage ran, and its result was handed over at once
  CHECK(stored.back().kernels == t.kernels);
  CHECK(anycl::tuning_complete(t));
  CHECK(t.kernels.at("XgemmDirect") == options.earlier.kernels.at("XgemmDirect"));
  CHECK(t.kernels.at("Xgemm") == options.earlier.kernels.at("Xgemm"));
  CHECK(t.kernels.at("GemmRoutine").at("XGEMM_MIN_INDIRECT_SIZE") >= 1);
  CHECK(t.seconds >= 100);  // the earlier run's time counts
  CHECK(std::count_if(lines.begin(), lines.end(), [](const std::string& l) {
          return l.find("kept from the earlier run") != std::string::npos;
        }) == 2);
  CHECK(t.device == rt.info().name);
  check_gemm_exact(65, 31, 7);  // whichever way the switch went, GEMM stays exact
  check_gemm_exact(128, 10, 512);
  CHECK(t.kernels.count("anyclDense") == 1);  // the measured dx choice, applied to the runtime
  CHECK(anycl::detail::gemm_state(rt).transposed_dx == (t.kernels.at("anyclDense").at("TRANSPOSED_DX") == 1));
  anycl::detail::gemm_state(rt).transposed_dx = false;

  options.indirect_seconds = 0;
  CHECK_THROWS_AS(anycl::tune_gemm(rt, options), anycl::ValidationError);
}

TEST_CASE("anycl bench latency --json and bad bench arguments") {
  const auto r =
      anycl::test::run_command(anycl::test::anycl_cli() + " bench latency --repeats 1 --json 2>/dev/null");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const auto j = nlohmann::json::parse(r.output);
  CHECK(j.contains("device"));
  CHECK(j.contains("date"));
  REQUIRE(j["latency"].size() == 3);
  CHECK(j["latency"][0]["value"].get<double>() > 0);

  CHECK(anycl::test::run_command(anycl::test::anycl_cli() + " bench nope").exit_code == 2);
  CHECK(anycl::test::run_command(anycl::test::anycl_cli() + " bench gemm --sizes 0").exit_code == 2);
  CHECK(anycl::test::run_command(anycl::test::anycl_cli() + " tune --minutes 0").exit_code == 2);
  CHECK(anycl::test::run_command(anycl::test::anycl_cli() + " tune --shapes NN1x2").exit_code == 2);
  const auto model = anycl::test::run_command(anycl::test::anycl_cli() + " tune --model resnet");
  CHECK(model.exit_code == 2);
  CHECK_MESSAGE(model.output.find("--model must be mlp, cnn or mlp,cnn") != std::string::npos, model.output);
  const auto layers =
      anycl::test::run_command(anycl::test::anycl_cli() + " tune --layers conv8x3 --features 10");
  CHECK(layers.exit_code == 2);  // 10 features are no square image: a convolution cannot fit
  CHECK_MESSAGE(layers.output.find("Conv2D") != std::string::npos, layers.output);
}

// Host behaviour (child processes, time budgets, signals, files): suite "cli", out of the Intel pass.
TEST_CASE("anycl tune continues a partial tuning file stage by stage in child processes" *
          doctest::test_suite("cli")) {
  anycl::test::TempDir dir;
  const auto name = std::filesystem::path(anycl::tuning_file_path(anycl::test::runtime().info())).filename();
  const std::string path = dir.file(name.string());
  anycl::GemmTuning partial;
  partial.kernels["XgemmDirect"] = current_parameters("XgemmDirect");
  partial.kernels["Xgemm"] = current_parameters("Xgemm");
  anycl::save_tuning(path, partial);
  const std::string cli = fmt::format("ANYCL_CACHE_DIR={} {}", dir.path(), anycl::test::anycl_cli());
  const auto r = anycl::test::run_command(cli + " tune");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(r.output.find("continuing the interrupted tuning") != std::string::npos);
  CHECK(r.output.find("[1/3] XgemmDirect: kept from the earlier run") != std::string::npos);
  CHECK(r.output.find("[2/3] Xgemm: kept from the earlier run") != std::string::npos);
  CHECK(r.output.find("XGEMM_MIN_INDIRECT_SIZE = ") != std::string::npos);
  std::string why;
  const auto t = anycl::load_tuning(path, &why);
  REQUIRE_MESSAGE(t, why);
  CHECK(anycl::tuning_complete(*t));
  CHECK(t->kernels.at("XgemmDirect") == partial.kernels.at("XgemmDirect"));
  CHECK(t->kernels.count("anyclDense") == 1);
  CHECK(r.output.find("dense dx as ") != std::string::npos);

  for (const char* wrong : {"NN0x1x1/zero", "NN1x1x1*0/no calls", "NN1x1x1*/no count", "NN1x1x1x/trailing",
                            "NN1x1x1^^/two marks", "NN1x1x1^*2/mark before the count"}) {
    const auto bad = anycl::test::run_command(cli + " tune --shapes '" + wrong + "'");
    CAPTURE(wrong);
    CHECK(bad.exit_code == 2);
    CHECK_MESSAGE(bad.output.find("is not a GEMM shape") != std::string::npos, bad.output);
  }
}

TEST_CASE("dense gradients are the same with dx through a transpose and a GEMM NN") {
  auto& rt = anycl::test::runtime();
  anycl::GemmTuning choice;
  choice.kernels["anyclDense"] = {{"TRANSPOSED_DX", 1}};
  auto gradients = [&](bool transposed) {
    anycl::detail::gemm_state(rt).transposed_dx = transposed;
    anycl::Sequential model(37);
    model.dense(29, anycl::Activation::relu).dense(23, anycl::Activation::tanh).dense(5);
    model.build(rt, 16);
    model.initialize(9);
    const auto x = anycl::Tensor::from_host(rt, {11, 37}, anycl::test::random_floats(11 * 37, -1, 1, 3));
    anycl::StepContext ctx;
    ctx.training = true;
    model.forward(x, ctx);
    auto dlogits = anycl::Tensor::from_host(rt, {11, 5}, anycl::test::random_floats(11 * 5, -1, 1, 4));
    // What the GEMM planner decides on this device: on the indirect kernel's GEMMK=0 form (NVIDIA's
    // Hopper entry) dx goes through two transposes and a TN product whatever the switch says.
    using Form = anycl::DenseDxForm;
    uint64_t expected = 0;
    for (const auto& [in, units, has_dx] : {std::tuple{37, 29, false}, {29, 23, true}, {23, 5, true}}) {
      expected += anycl::detail::dense_dw_turned(rt, 11, in, units) ? 1 : 0;
      if (!has_dx) continue;  // the first layer needs no dx
      const auto form = anycl::detail::dense_dx(rt, 11, in, units);
      CHECK((form == Form::transposes_gemm_tn ||
             form == (transposed ? Form::transpose_w_gemm_nn : Form::gemm_nt)));
      expected += form == Form::transposes_gemm_tn ? 2 : form == Form::transpose_w_gemm_nn ? 1 : 0;
    }
    const auto before = rt.counters().transposes;
    model.backward(dlogits, ctx);
    CHECK(rt.counters().transposes - before == expected);
    return model.gradients().download();
  };
  const auto nt = gradients(false), via_transpose = gradients(true);
  anycl::test::check_close(via_transpose, nt, 1e-6, 1e-5, "gradients");
  anycl::detail::gemm_state(rt).transposed_dx = false;
  anycl::apply_tuning(rt, choice);  // the stored choice switches the runtime, not CLBlast
  CHECK(anycl::detail::gemm_state(rt).transposed_dx);
  choice.kernels["anyclDense"] = {{"TRANSPOSED_DX", 0}};
  anycl::apply_tuning(rt, choice);
  CHECK(!anycl::detail::gemm_state(rt).transposed_dx);
}

namespace {

// What CLBlast 1.5.3's TuneXgemm chose on PoCL 3.1 here (2026-11-22): exact in the tuner's own
// check at 512x512x1024, wrong through the GEMM routine. Intel's CPU compiler (2026.2) computes them
// wrongly too, and at times dies with SIGSEGV compiling them: they are untrusted parameters.
anycl::GemmTuning suspect_tuning() {
  anycl::GemmTuning suspect;
  suspect.kernels["Xgemm"] = {{"GEMMK", 1},  {"KREG", 8},   {"KWG", 1},   {"KWI", 1},
                              {"MDIMA", 16}, {"MDIMC", 16}, {"MWG", 128}, {"NDIMB", 2},
                              {"NDIMC", 2},  {"NWG", 16},   {"SA", 0},    {"SB", 0},
                              {"STRM", 0},   {"STRN", 0},   {"VWM", 8},   {"VWN", 8}};
  return suspect;
}

const char* const kInProcessCase = "tuning_mismatch in this process on the suspect parameters";

}  // namespace

// Run only as a child of the next test (doctest::skip keeps it out of CTest's list): compiling the
// suspect parameters in this process may crash the driver.
TEST_CASE("tuning_mismatch in this process on the suspect parameters" * doctest::skip()) {
  auto& rt = anycl::test::runtime();
  const auto before = current_parameters("Xgemm"), routine_before = current_parameters("GemmRoutine");
  const anycl::GemmTuning suspect = suspect_tuning();
  const std::string verdict = anycl::tuning_mismatch(rt, suspect);
  std::printf("in-process verdict: %s\n", verdict.empty() ? "exact" : verdict.c_str());
  CHECK(current_parameters("Xgemm") == before);  // restored
  // The verdict must agree with an independent exact check through the forced indirect kernel.
  // apply_tuning refuses them (GEMMK=1 with MWG ≠ NWG), so they go to CLBlast directly here.
  const auto& xgemm = suspect.kernels.at("Xgemm");
  namespace params = anycl::detail::clblast_params;
  REQUIRE(params::override_parameters(rt.info().id, "Xgemm", {xgemm.begin(), xgemm.end()}) ==
          clblast::StatusCode::kSuccess);
  REQUIRE(params::override_parameters(rt.info().id, "GemmRoutine", {{"XGEMM_MIN_INDIRECT_SIZE", 1}}) ==
          clblast::StatusCode::kSuccess);
  std::vector<float> a = anycl::test::random_ints(65 * 33, -3, 3, 1),
                     b = anycl::test::random_ints(33 * 9, -3, 3, 2);
  auto ta = anycl::Tensor::from_host(rt, {65, 33}, a), tb = anycl::Tensor::from_host(rt, {33, 9}, b);
  anycl::Tensor tc(rt, {65, 9});
  anycl::matmul(ta, anycl::Trans::no, tb, anycl::Trans::no, tc);
  std::vector<float> ref(65 * 9);
  anycl::reference::gemm(false, false, 65, 9, 33, 1.f, a.data(), 33, b.data(), 9, 0.f, ref.data(), 9);
  const bool exact = tc.download() == ref;
  CHECK_MESSAGE(verdict.find("MWG=128 ≠ NWG=16") != std::string::npos, verdict);  // refused unseen
  MESSAGE("the suspect parameters forced onto the GEMM routine: ", exact ? "exact" : "wrong");
  anycl::GemmTuning restore;
  restore.kernels = {{"Xgemm", before}, {"GemmRoutine", routine_before}};
  anycl::apply_tuning(rt, restore);
}

TEST_CASE("tuning_mismatch refuses parameters that compute wrong GEMMs and leaves CLBlast as it was") {
  auto& rt = anycl::test::runtime();
  anycl::GemmTuning good;
  good.kernels["XgemmDirect"] = current_parameters("XgemmDirect");
  good.kernels["Xgemm"] = current_parameters("Xgemm");
  CHECK(anycl::tuning_mismatch(rt, good) == "");

  // Untrusted parameters are checked in a child process (`anycl tune --check`): a wrong result or
  // a driver crash refuses them, naming the device, its driver and the parameters.
  anycl::test::TempDir dir;
  anycl::save_tuning(dir.file("suspect.txt"), suspect_tuning());
  const auto checked = anycl::test::run_command(fmt::format(
      "{} tune --device {} --check {}", anycl::test::anycl_cli(), rt.info().index, dir.file("suspect.txt")));
  MESSAGE("anycl tune --check on the suspect parameters: ", checked.output);
  const bool refused = checked.exit_code != 0;
  if (refused) {
    CHECK(checked.exit_code == 1);
    for (const std::string& word : {std::string("refused parameter set on"), rt.info().name,
                                    rt.info().driver_version, std::string("GEMMK=1 KREG=8")})
      CHECK_MESSAGE(checked.output.find(word) != std::string::npos, word, " not in: ", checked.output);
  } else {
    CHECK(checked.output.find("exact on " + rt.info().name) != std::string::npos);
  }

  // The same check in a process of its own (this test binary, the case above): it agrees with the
  // child's verdict, or the driver crashed there too, which only refused parameters may do.
  const std::string self = anycl::detail::platform::current_executable().string();
  const auto in_process =
      anycl::test::run_command(fmt::format("'{}' --no-skip --test-case='{}'", self, kInProcessCase));
  const bool crashed = in_process.exit_code > 128 || in_process.output.find("CRASHED") != std::string::npos;
  if (crashed) {
    CHECK_MESSAGE(refused, in_process.output);
  } else {
    REQUIRE_MESSAGE(in_process.exit_code == 0, in_process.output);
    CHECK_MESSAGE(refused, checked.output);  // GEMMK=1 with MWG ≠ NWG: refused by the constraint
    CHECK_MESSAGE(in_process.output.find("in-process verdict: exact") == std::string::npos,
                  in_process.output);
  }
  check_gemm_exact(65, 31, 7);
}

TEST_CASE("stored tuning parameters that break CLBlast's constraints are refused when applied") {
  auto& rt = anycl::test::runtime();
  const auto direct = current_parameters("XgemmDirect"), indirect = current_parameters("Xgemm");
  // The report's case: a valid checksum, XgemmDirect with MDIMAD=3 and VWMD=8 (silently wrong GEMMs).
  anycl::GemmTuning bad;
  bad.kernels["XgemmDirect"] = direct;
  bad.kernels["XgemmDirect"]["MDIMAD"] = 3;
  bad.kernels["XgemmDirect"]["VWMD"] = 8;
  CHECK_THROWS_WITH_AS(anycl::apply_tuning(rt, bad), doctest::Contains("XgemmDirect"),
                       anycl::ValidationError);
  const std::string m =
      anycl::test::thrown_message<anycl::ValidationError>([&] { anycl::apply_tuning(rt, bad); });
  CHECK_MESSAGE(m.find("MDIMAD") != std::string::npos, m);
  CHECK(current_parameters("XgemmDirect") == direct);  // nothing was applied
  anycl::GemmTuning odd;
  odd.kernels["Xgemm"] = indirect;
  odd.kernels["Xgemm"]["VWM"] = 3;
  CHECK_THROWS_WITH_AS(anycl::apply_tuning(rt, odd), doctest::Contains("VWM=3"), anycl::ValidationError);
  anycl::GemmTuning unknown;
  unknown.kernels["Xgemv"] = {{"WGS", 64}};
  CHECK_THROWS_WITH_AS(anycl::apply_tuning(rt, unknown), doctest::Contains("unknown kernel 'Xgemv'"),
                       anycl::ValidationError);
  CHECK(current_parameters("Xgemm") == indirect);

  // Through the command: a run beside such a file stops, naming the file and `anycl tune --reset`.
  anycl::test::TempDir dir;
  anycl::test::seeded_kernel_cache(dir.path());
  const auto name = std::filesystem::path(anycl::tuning_file_path(rt.info())).filename().string();
  anycl::save_tuning(dir.file(name), bad);
  const std::string cli = fmt::format("ANYCL_CACHE_DIR={} {}", dir.path(), anycl::test::anycl_cli());
  auto r = anycl::test::run_command(cli + " train --limit 100 --epochs 1 --layers 8 --quiet");
  CHECK(r.exit_code == 1);
  CHECK_MESSAGE(r.output.find(dir.file(name)) != std::string::npos, r.output);
  CHECK_MESSAGE(r.output.find("anycl tune --reset") != std::string::npos, r.output);
  CHECK_MESSAGE(r.output.find("MDIMAD") != std::string::npos, r.output);
  anycl::save_tuning(dir.file(name), unknown);
  r = anycl::test::run_command(cli + " train --limit 100 --epochs 1 --layers 8 --quiet");
  CHECK(r.exit_code == 1);
  CHECK_MESSAGE(r.output.find("unknown kernel 'Xgemv'") != std::string::npos, r.output);
  r = anycl::test::run_command(cli + " tune --reset");
  CHECK(r.exit_code == 0);
  r = anycl::test::run_command(cli + " train --limit 100 --epochs 1 --layers 8 --quiet");
  CHECK_MESSAGE(r.exit_code == 0, r.output);
}

TEST_CASE("a tuning file that is a FIFO is refused at once and the runtime starts") {
  anycl::test::TempDir dir;
  anycl::test::seeded_kernel_cache(dir.path());
  const auto name = std::filesystem::path(anycl::tuning_file_path(anycl::test::runtime().info())).filename();
  const std::string fifo = dir.file(name.string());
  if (!anycl::test::make_fifo(fifo)) ANYCL_SKIP_TEST(Missing::capability, "no FIFOs on this system");
  std::string why;
  CHECK_FALSE(anycl::load_tuning(fifo, &why));
  CHECK_MESSAGE(why.find("FIFO") != std::string::npos, why);
  const auto r = anycl::test::run_command(fmt::format("ANYCL_CACHE_DIR={} timeout 120 {} devices --verbose",
                                                      dir.path(), anycl::test::anycl_cli()));
  CHECK_MESSAGE(r.exit_code == 0, r.output);
  CHECK_MESSAGE(r.output.find("FIFO") != std::string::npos, r.output);
}

TEST_CASE("a stored tuning is checked for exact GEMMs once per device and driver - the verdict is cached") {
  anycl::test::TempDir dir;
  anycl::test::seeded_kernel_cache(dir.path());
  auto& rt = anycl::test::runtime();
  const auto name = std::filesystem::path(anycl::tuning_file_path(rt.info())).filename().string();
  anycl::GemmTuning good;
  good.kernels["XgemmDirect"] = current_parameters("XgemmDirect");
  good.kernels["GemmRoutine"] = {{"XGEMM_MIN_INDIRECT_SIZE", 384}};
  good.kernels["anyclConv"] = {{"DW_SLICES", 16}};  // anycl's own: not asked of CLBlast
  anycl::save_tuning(dir.file(name), good);
  const std::string cli =
      fmt::format("ANYCL_CACHE_DIR={} {} devices --verbose", dir.path(), anycl::test::anycl_cli());
  const auto verdicts = [&] {
    size_t n = 0;
    for (const auto& e : std::filesystem::directory_iterator(dir.path()))
      n += e.path().filename().string().rfind("tuning_check-", 0) == 0;
    return n;
  };
  auto r = anycl::test::run_command(cli);
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK_MESSAGE(r.output.find("CLBlast tuning applied from " + dir.file(name)) != std::string::npos,
                r.output);
  CHECK(verdicts() == 1);
  CHECK_MESSAGE(r.output.find("CLBlast: Run-time error") == std::string::npos, r.output);
  r = anycl::test::run_command(cli);
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK(verdicts() == 1);
  CHECK_MESSAGE(r.output.find("tuning_check") == std::string::npos, r.output);  // loaded, not compiled
}

TEST_CASE(
    "the exact check shortens long sides, keeping their partial tiles and the kernel the switch picks") {
  auto& rt = anycl::test::runtime();
  const auto routine = current_parameters("GemmRoutine");
  auto set_switch = [&](size_t sw) {
    anycl::GemmTuning t;
    t.kernels["GemmRoutine"] = {{"XGEMM_MIN_INDIRECT_SIZE", sw}};
    anycl::apply_tuning(rt, t);
  };
  const anycl::GemmShape big{"big", false, true, 4100, 1030, 700};
  set_switch(1);  // every size indirect: 512 plus each side's remainder modulo 128
  auto c = anycl::detail::checked_gemm_shape(rt, big);
  CHECK((c.m == 516 && c.n == 518 && c.k == 572));
  CHECK((!c.trans_a && c.trans_b && c.label == "big"));
  const anycl::GemmShape cube{"4096³", false, false, 4096, 4096, 4096};
  c = anycl::detail::checked_gemm_shape(rt, cube);
  CHECK((c.m == 512 && c.n == 512 && c.k == 512));  // 134 M multiply-adds on the host instead of 68.7 G
  set_switch(700);  // 4100·1030·700 is over 700³, 516·518·572 under it: shortened, it would run direct
  c = anycl::detail::checked_gemm_shape(rt, big);
  CHECK((c.m == big.m && c.n == big.n && c.k == big.k));
  const anycl::GemmShape short_sides{"short", true, false, 640, 600, 9};
  c = anycl::detail::checked_gemm_shape(rt, short_sides);  // nothing over 640: checked as it is
  CHECK((c.m == 640 && c.n == 600 && c.k == 9));
  anycl::GemmTuning restore;
  restore.kernels["GemmRoutine"] = routine;
  anycl::apply_tuning(rt, restore);
}

TEST_CASE("the start-up check meets odd sizes on both sides of the direct/indirect switch") {
  // Each shape runs where the switch sends it (m·n·k < switch³: direct), so the check adds odd sizes
  // over the switch; gemm_mismatch's own (7³, 31·17·65, 65·33·9) stay under any switch past 65.
  for (size_t s : {2, 65, 120, 384, 512}) {
    const auto shapes = anycl::detail::odd_shapes_over(s);
    CHECK(shapes.size() == 4);
    std::set<std::pair<bool, bool>> transposes;
    for (const auto& g : shapes) {
      CAPTURE(s);
      CHECK(g.m * g.n * g.k >= s * s * s);
      CHECK((g.m % 2 == 1 && g.n % 2 == 1 && g.k % 2 == 1));
      transposes.insert({g.trans_a, g.trans_b});
    }
    CHECK(transposes.size() == 4);
  }
  CHECK(anycl::detail::odd_shapes_over(1).empty());    // every size is indirect already
  CHECK(anycl::detail::odd_shapes_over(513).empty());  // beyond a host loop at start-up
}
