// The tuning search: parameter neighbours and the shortlist, candidates timed and checked in this
// process, a quick tune_gemm, and the CLI's candidates in child processes: first-use tuning in
// `anycl train`, a candidate that crashes its child costing only that candidate, and Ctrl-C keeping
// the best set found so far.
#include <doctest/doctest.h>
#include <fmt/format.h>
#include <anycl/blas/tuning.hpp>
#include <anycl/error.hpp>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <thread>

#include "background.hpp"
#include "blas/clblast_params.hpp"
#include "blas/gemm_plan.hpp"
#include "blas/tuning/gemm_timing.hpp"
#include "blas/tuning/parameter_space.hpp"
#include "data_files.hpp"
#include "helpers.hpp"
#include "indirect_gemm.hpp"

namespace {

using anycl::test::ScopedEnv;

std::map<std::string, size_t> current(const std::string& kernel) {
  std::map<std::string, size_t> p;
  REQUIRE(anycl::detail::clblast_params::retrieve(anycl::test::runtime().info().id, kernel, p) ==
          clblast::StatusCode::kSuccess);
  return p;
}

// How many parameters of `a` and `b` differ, and whether each differing one is one step apart.
size_t steps_apart(const anycl::detail::ParameterSpace& space, const anycl::detail::Params& a,
                   const anycl::detail::Params& b) {
  size_t moved = 0;
  for (const auto& [name, values] : space.values) {
    const auto ia = std::find(values.begin(), values.end(), a.at(name));
    const auto ib = std::find(values.begin(), values.end(), b.at(name));
    REQUIRE(ia != values.end());
    REQUIRE(ib != values.end());
    if (ia == ib) continue;
    CHECK(std::abs(long(ia - ib)) == 1);
    ++moved;
  }
  return moved;
}

std::string slurp_file(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The tuning-search tests' own database: two small sets per kernel in place of the shipped entries'
// 18 (each candidate is a CLBlast program of its own, minutes of compiling on a cold machine).
const std::string kSmallDatabase = std::string(ANYCL_SOURCE_DIR) + "/tests/tuning_database";

const std::vector<anycl::GemmShape> kSmall = {{"fwd 1", false, false, 32, 48, 40},
                                              {"dW 1", true, false, 40, 48, 32},
                                              {"dX 2", false, true, 32, 40, 48}};

}  // namespace

TEST_CASE("neighbours are one step away and fit - the shortlist starts with CLBlast's current set") {
  ScopedEnv on("ANYCL_TUNING_DATABASE", "on");
  auto& rt = anycl::test::runtime();
  for (const char* kernel : {"XgemmDirect", "Xgemm"}) {
    CAPTURE(kernel);
    const auto& space = *anycl::detail::space_of(kernel);
    const auto list = anycl::tuning_shortlist(rt, kernel);
    REQUIRE(list.size() >= 2);  // CLBlast's own set and at least one of the database
    CHECK(list.front().params == current(kernel));
    for (const auto& c : list) {
      CHECK(c.kernel == kernel);
      CHECK(anycl::detail::fits(space, c.params, rt.info()));
    }
    for (const auto& set : anycl::database_parameter_sets(kernel))
      if (anycl::detail::fits(space, set, rt.info()))
        CHECK(std::any_of(list.begin(), list.end(), [&](const auto& c) { return c.params == set; }));
    const auto near = anycl::detail::neighbours(space, list.back().params, rt.info());
    CHECK(!near.empty());
    for (const auto& p : near) {
      CHECK(anycl::detail::fits(space, p, rt.info()));
      const size_t moved = steps_apart(space, list.back().params, p);
      CHECK((moved == 1 || moved == 2));  // one parameter, or a tied pair
    }
  }
  // A device no entry matches (ANYCL_TUNING_DATABASE=off stands in for one) still gets the shipped
  // sets on its shortlist: that is where first-use tuning needs them.
  ScopedEnv off("ANYCL_TUNING_DATABASE", "off");
  CHECK(!anycl::database_tuning(rt.info()));
  CHECK(anycl::tuning_shortlist(rt, "XgemmDirect").size() >= 2);
  CHECK(anycl::tuning_shortlist(rt, "Xgemm").size() >= 2);
  CHECK_THROWS_AS(anycl::tuning_shortlist(rt, "Xgemv"), anycl::ValidationError);
}

TEST_CASE("candidates are timed, only the fastest so far is checked, and CLBlast is left as it was") {
  ScopedEnv small("ANYCL_TUNING_DATABASE", kSmallDatabase);
  auto& rt = anycl::test::runtime();
  const auto before = current("XgemmDirect"), routine = current("GemmRoutine");
  auto list = anycl::tuning_shortlist(rt, "XgemmDirect");
  REQUIRE(list.size() >= 2);  // CLBlast's current set and the folder's
  list.push_back({"XgemmDirect", list.front().params});
  list.back().params["WGD"] = 24;     // not a multiple of MDIMCD: breaks CLBlast's constraints, refused
  list.back().params["MDIMCD"] = 16;  // before anything compiles (whatever set is current)
  std::vector<size_t> started;
  std::vector<anycl::CandidateResult> results;
  anycl::measure_candidates(
      rt, list, kSmall, 1e30, 600, [&](size_t i) { started.push_back(i); },
      [&](const anycl::CandidateResult& r) { results.push_back(r); });
  REQUIRE(results.size() == list.size());
  CHECK(started.size() == list.size());
  double best = 1e30;
  for (size_t i = 0; i + 1 < list.size(); ++i) {
    CAPTURE(i);
    CHECK(results[i].index == i);
    CHECK(results[i].seconds > 0);
    CHECK(results[i].error.empty());
    CHECK(results[i].exact == (results[i].seconds < best));  // checked exactly when fastest so far
    best = std::min(best, results[i].seconds);
  }
  for (size_t i = 0; i + 1 < list.size(); ++i) {  // each GEMM's time, dense dx also as NN: the switch's data
    REQUIRE(results[i].shape_seconds.size() == anycl::timed_shapes(kSmall).size());
    CHECK(*std::min_element(results[i].shape_seconds.begin(), results[i].shape_seconds.end()) > 0);
  }
  CHECK(results.back().seconds == 0);
  CHECK(results.back().error.find("WGD") != std::string::npos);
  CHECK(current("XgemmDirect") == before);
  CHECK(current("GemmRoutine") == routine);
  // A budget of nothing measures nothing.
  results.clear();
  anycl::measure_candidates(rt, list, kSmall, 1e30, 0, nullptr,
                            [&](const anycl::CandidateResult& r) { results.push_back(r); });
  CHECK(results.empty());
}

TEST_CASE("a quick tune_gemm keeps exact sets, picks switch and dx layout, and records the gain") {
  ScopedEnv small("ANYCL_TUNING_DATABASE", kSmallDatabase);
  auto& rt = anycl::test::runtime();
  const auto direct = current("XgemmDirect"), indirect = current("Xgemm"), routine = current("GemmRoutine");
  anycl::TuneOptions o;
  o.quick = true;
  o.shapes = kSmall;
  o.direct_seconds = 10, o.indirect_seconds = 8;  // bounded as --quick is: cold compiles take seconds each
  std::vector<std::string> lines;
  o.progress = [&](const std::string& line) { lines.push_back(line); };
  const anycl::GemmTuning t = anycl::tune_gemm(rt, o);
  CHECK(anycl::tuning_complete(t));
  CHECK(t.quick);
  CHECK(t.seconds_before > 0);
  CHECK(t.seconds_after > 0);
  CHECK(anycl::tuning_mismatch(rt, t, kSmall).empty());
  const auto said = [&](const std::string& part) {
    return std::any_of(lines.begin(), lines.end(),
                       [&](const auto& l) { return l.find(part) != std::string::npos; });
  };
  CHECK(said("shortlist: "));
  CHECK(said("exact, fastest so far"));
  CHECK(!said("neighbours of"));  // quick: the shortlist only
  CHECK(said("dense dx as "));
  anycl::GemmTuning restore;
  restore.kernels = {{"XgemmDirect", direct}, {"Xgemm", indirect}, {"GemmRoutine", routine}};
  anycl::apply_tuning(rt, restore);
  anycl::detail::gemm_state(rt).transposed_dx = false;
}

// The direct stage's best set is the fastest over every shape; the switch stage may pair another set
// the stage timed with a switch that sends it only the shapes it is fast at. Timings are scripted
// through TuneOptions::measure (the seam the CLI uses for child processes), so the choice is certain;
// the GEMMs, the transposes and the time before tuning run on the device.
TEST_CASE("the switch stage may take another timed direct set for the shapes it sends to the direct kernel") {
  ScopedEnv small("ANYCL_TUNING_DATABASE", kSmallDatabase);
  auto& rt = anycl::test::runtime();
  const auto direct = current("XgemmDirect"), indirect = current("Xgemm"), routine = current("GemmRoutine");
  const std::vector<anycl::GemmShape> shapes = {{"big", false, false, 64, 64, 64},
                                                {"small", false, false, 8, 8, 8}};
  const std::vector<anycl::GemmShape> timed = anycl::timed_shapes(shapes);
  // Direct sets in the order first timed: A fast on the big shape, B on the small one, the rest slow;
  // the indirect kernel in between on both.
  std::vector<std::map<std::string, size_t>> direct_seen;
  anycl::TuneOptions o;
  o.quick = true;
  o.shapes = shapes;
  o.direct_seconds = o.indirect_seconds = 60;
  o.measure = [&](const std::vector<anycl::TuningCandidate>& list, double, double,
                  const std::function<void(const anycl::CandidateResult&)>& on_result) {
    for (size_t i = 0; i < list.size(); ++i) {
      const anycl::TuningCandidate& c = list[i];
      double big = 5e-3, little = 5e-3;  // the indirect kernel
      if (c.kernel == "XgemmDirect") {
        auto seen = std::find(direct_seen.begin(), direct_seen.end(), c.params);
        if (seen == direct_seen.end()) seen = direct_seen.insert(direct_seen.end(), c.params);
        const auto role = seen - direct_seen.begin();
        big = role == 0 ? 1e-3 : 100e-3, little = role == 0 ? 10e-3 : role == 1 ? 1e-3 : 100e-3;
      }
      anycl::CandidateResult r;
      r.index = i, r.exact = true;
      for (const auto& s : timed)
        r.shape_seconds.push_back(s.m * s.n * s.k >= size_t{64} * 64 * 64 ? big : little);
      for (const double t : r.shape_seconds) r.seconds += t;
      on_result(r);
    }
  };
  std::vector<std::string> lines;
  o.progress = [&](const std::string& line) { lines.push_back(line); };
  const anycl::GemmTuning t = anycl::tune_gemm(rt, o);
  REQUIRE(direct_seen.size() >= 2);
  CHECK(t.kernels.at("XgemmDirect") == direct_seen[1]);  // B, not the stage's best A
  const size_t sw = t.kernels.at("GemmRoutine").at("XGEMM_MIN_INDIRECT_SIZE");
  CHECK(sw * sw * sw > size_t{8} * 8 * 8);      // the small shape direct (m·n·k below the switch's cube)
  CHECK(sw * sw * sw <= size_t{64} * 64 * 64);  // the big one indirect
  CHECK(std::any_of(lines.begin(), lines.end(), [](const std::string& l) {
    return l.find("direct set for the shapes the switch sends there") != std::string::npos;
  }));
  anycl::GemmTuning restore;
  restore.kernels = {{"XgemmDirect", direct}, {"Xgemm", indirect}, {"GemmRoutine", routine}};
  anycl::apply_tuning(rt, restore);
  anycl::detail::gemm_state(rt).transposed_dx = false;
}

// Host behaviour (child processes, time budgets, signals, files): suite "cli", out of the Intel pass,
// as are the three "anycl tune" tests further down.
TEST_CASE("anycl train tunes a device without tuning on first use, once, and --no-autotune skips it" *
          doctest::test_suite("cli")) {
  anycl::test::TempDir dir;
  anycl::test::TinySpec spec;
  spec.train = 128, spec.test = 32, spec.rows = 8, spec.cols = 8;
  const std::string data = dir.file("data");
  std::filesystem::create_directories(data);
  anycl::test::write_mnist_folder(data, spec);
  const std::string cli = fmt::format("ANYCL_CACHE_DIR={} ANYCL_AUTOTUNE=on ANYCL_TUNING_DATABASE={} {}",
                                      dir.file("cache"), kSmallDatabase, anycl::test::anycl_cli());
  const std::string train =
      fmt::format(" train --data {} --epochs 1 --layers 24 --batch 32 --max-steps 2", data);
  const auto skipped = anycl::test::run_command(cli + train + " --no-autotune 2>&1");
  REQUIRE_MESSAGE(skipped.exit_code == 0, skipped.output);
  CHECK(skipped.output.find("first use of") == std::string::npos);
  const auto first = anycl::test::run_command(cli + train + " 2>&1");
  REQUIRE_MESSAGE(first.exit_code == 0, first.output);
  CHECK_MESSAGE(first.output.find("first use of") != std::string::npos, first.output);
  CHECK_MESSAGE(first.output.find("first-use tuning: the model's GEMMs take") != std::string::npos,
                first.output);
  CHECK(first.output.find("[1/3] XgemmDirect") != std::string::npos);  // the child's progress is shown
  const auto name = std::filesystem::path(anycl::tuning_file_path(anycl::test::runtime().info())).filename();
  const auto t = anycl::load_tuning((std::filesystem::path(dir.file("cache")) / name).string());
  REQUIRE(t);
  CHECK(t->quick);
  CHECK(anycl::tuning_complete(*t));
  const auto second = anycl::test::run_command(cli + train + " 2>&1");
  REQUIRE_MESSAGE(second.exit_code == 0, second.output);
  CHECK(second.output.find("first use of") == std::string::npos);
}

TEST_CASE(
    "anycl tune --quick: measured against the device's entry, kept unless beaten by 5 % - a candidate that "
    "crashes its child process costs that candidate only") {
  anycl::test::TempDir dir;
  anycl::test::seeded_kernel_cache(dir.file("cache"));
  // The small sets as this device's own entry (what first-use tuning on a generic-entry device
  // measures against), the switch with them.
  const std::string folder = dir.file("database");
  std::filesystem::create_directories(folder);
  std::string entry = slurp_file(kSmallDatabase + "/small-sets.txt");
  const std::string no_device = "match device=a device no machine has";
  REQUIRE(entry.find(no_device) != std::string::npos);
  entry.replace(entry.find(no_device), no_device.size(),
                "match platform=" + anycl::test::runtime().info().platform_name +
                    "\nkernel GemmRoutine XGEMM_MIN_INDIRECT_SIZE=1");
  std::ofstream(folder + "/small-sets.txt") << entry;
  const std::string cli =
      fmt::format("ANYCL_CACHE_DIR={} ANYCL_TUNING_DATABASE={} ANYCL_TEST_CRASH_CANDIDATE=1 {}",
                  dir.file("cache"), folder, anycl::test::anycl_cli());
  const auto r =
      anycl::test::run_command(cli + " tune --quick --shapes 'NN32x48x40^/fwd 1;TN40x48x32*3/dW 1' 2>&1");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);  // *3: a dW of three slices, ^: a Dense product, passed on
  CHECK_MESSAGE(r.output.find("refused: the driver crashed on it (killed by SIGABRT)") != std::string::npos,
                r.output);
  CHECK(r.output.find("tuned in ") != std::string::npos);
  CHECK_MESSAGE(
      r.output.find("measured against anycl's tuning database entry " + folder) != std::string::npos,
      r.output);
  const auto name = std::filesystem::path(anycl::tuning_file_path(anycl::test::runtime().info())).filename();
  const auto t = anycl::load_tuning((std::filesystem::path(dir.file("cache")) / name).string());
  REQUIRE(t);
  CHECK(anycl::tuning_complete(*t));
  if (r.output.find("keeping it") != std::string::npos) {  // the entry's sets, not the candidates'
    CHECK(t->kernels.at("Xgemm").at("MWG") == 64);
    CHECK(t->kernels.at("XgemmDirect").at("WGD") == 8);
    CHECK(t->kernels.at("GemmRoutine").at("XGEMM_MIN_INDIRECT_SIZE") == 1);
    CHECK(t->seconds_after == doctest::Approx(t->seconds_before));
  } else {
    CHECK_MESSAGE(t->seconds_after * 1.05 <= t->seconds_before, r.output);
  }
}

TEST_CASE("timed shapes are the model's, then each dense dx (an NT shape) as the NN GEMM it can run as") {
  const auto timed = anycl::timed_shapes(kSmall);
  REQUIRE(timed.size() == kSmall.size() + 1);
  CHECK(timed.back().label == "dX 2 as NN");
  CHECK((!timed.back().trans_a && !timed.back().trans_b));
  CHECK((timed.back().m == 32 && timed.back().n == 40 && timed.back().k == 48));
}

TEST_CASE("Dense's products are also timed as TN, and an indirect candidate is counted as trained") {
  const std::vector<anycl::GemmShape> dense = {{"fwd 1", false, false, 32, 48, 40, 1, true},
                                               {"dW 1", true, false, 40, 48, 32},
                                               {"dX 2", false, true, 32, 40, 48, 1, true}};
  const auto timed = anycl::timed_shapes(dense);
  REQUIRE(timed.size() == 3 + 1 + 2);  // the shapes, dX as NN, fwd and dX as TN
  const auto tn = anycl::tn_positions(dense);
  REQUIRE(tn == std::vector<size_t>{4, anycl::kNoTn, 5});
  for (size_t i : {size_t(0), size_t(2)}) {
    CAPTURE(i);
    const auto& t = timed[tn[i]];
    CHECK(t.label == dense[i].label + " as TN");
    CHECK((t.trans_a && !t.trans_b && !t.transposes_a));
    CHECK((t.m == dense[i].m && t.n == dense[i].n && t.k == dense[i].k));
  }
  // On the indirect kernel in its GEMMK=0 form, a Dense product counts as anycl's transposes plus the
  // TN GEMM; on the direct kernel as the product itself.
  auto& rt = anycl::test::runtime();
  auto seconds_of = [&](const std::string& kernel) {
    std::vector<anycl::CandidateResult> results;
    anycl::measure_candidates(rt, {{kernel, current(kernel)}}, dense, 1e30, 600, nullptr,
                              [&](const anycl::CandidateResult& r) { results.push_back(r); });
    REQUIRE(results.size() == 1);
    REQUIRE(results[0].shape_seconds.size() == timed.size());
    return results[0];
  };
  const anycl::CandidateResult direct = seconds_of("XgemmDirect");
  CHECK(direct.transposes_seconds == 0);
  CHECK(direct.seconds ==
        doctest::Approx(direct.shape_seconds[0] + direct.shape_seconds[1] + direct.shape_seconds[2]));
  anycl::test::IndirectGemmScope indirect_gemmk0(rt);
  const anycl::CandidateResult indirect = seconds_of("Xgemm");
  CHECK(indirect.transposes_seconds > 0);
  CHECK(indirect.seconds == doctest::Approx(indirect.shape_seconds[4] + indirect.shape_seconds[1] +
                                            indirect.shape_seconds[5] + indirect.transposes_seconds));
  CHECK(anycl::detail::dense_transposes_seconds(rt, dense[2]) > 0);
  CHECK(anycl::detail::dense_transposes_seconds(rt, timed[1]) == 0);  // dW: no transposes
}

TEST_CASE("anycl tune --quick: a candidate still compiling when its stage's time is spent is dropped" *
          doctest::test_suite("cli")) {
  anycl::test::TempDir dir;
  // Candidate 1 of each stage never finishes (as a compile that would take longer than the stage).
  const std::string cli =
      fmt::format("ANYCL_CACHE_DIR={} ANYCL_TUNING_DATABASE={} ANYCL_TEST_HANG_CANDIDATE=1 {}", dir.path(),
                  kSmallDatabase, anycl::test::anycl_cli());
  const auto r = anycl::test::run_command(
      cli + " tune --quick --minutes 0.5 --shapes 'NN32x48x40/fwd 1;TN40x48x32/dW 1' 2>&1");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK_MESSAGE(r.output.find("sets not measured: the stage's") != std::string::npos, r.output);
  CHECK(r.output.find("tuned in ") != std::string::npos);
  std::string why;
  const auto t = anycl::load_tuning(
      dir.file(
          std::filesystem::path(anycl::tuning_file_path(anycl::test::runtime().info())).filename().string()),
      &why);
  REQUIRE_MESSAGE(t, why);
  CHECK(anycl::tuning_complete(*t));
}

TEST_CASE("Ctrl-C during anycl tune keeps the best exact set found so far, and the next run continues" *
          doctest::test_suite("cli")) {
  anycl::test::TempDir dir;
  const std::string shapes = "'NN48x40x56/fwd 1;TN56x40x48/dW 1'";
  const std::string cli = fmt::format("ANYCL_CACHE_DIR={} ANYCL_TUNING_DATABASE={} {}", dir.path(),
                                      kSmallDatabase, anycl::test::anycl_cli());
  const std::string log = dir.file("log.txt");
  anycl::test::Background run("env " + cli + " tune --minutes 30 --shapes " + shapes, log);  // env: exec'd
  bool found = false;  // bounded wait for the first exact set; no pass or fail depends on the time
  for (int i = 0; i < 600 && !found; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    found = slurp_file(log).find("exact, fastest so far") != std::string::npos;
  }
  REQUIRE_MESSAGE(found, slurp_file(log));
  run.signal(SIGINT);
  CHECK(run.wait() == 130);
  CHECK_MESSAGE(
      slurp_file(log).find("interrupted; the finished stages and the best set found so far are stored") !=
          std::string::npos,
      slurp_file(log));
  const auto name = std::filesystem::path(anycl::tuning_file_path(anycl::test::runtime().info())).filename();
  const std::string path = (std::filesystem::path(dir.path()) / name).string();
  const auto kept = anycl::load_tuning(path);
  REQUIRE(kept);
  CHECK(kept->kernels.count("XgemmDirect") == 1);
  CHECK(!anycl::tuning_complete(*kept));
  const auto again = anycl::test::run_command(cli + " tune --minutes 0.2 --shapes " + shapes + " 2>&1");
  REQUIRE_MESSAGE(again.exit_code == 0, again.output);
  CHECK(again.output.find("continuing the interrupted tuning") != std::string::npos);
  CHECK(again.output.find("[1/3] XgemmDirect: kept from the earlier run") != std::string::npos);
  const auto done = anycl::load_tuning(path);
  REQUIRE(done);
  CHECK(anycl::tuning_complete(*done));
  CHECK(done->kernels.at("XgemmDirect") == kept->kernels.at("XgemmDirect"));
}

TEST_CASE("anycl tune refuses a tuning path that is not a regular file, before tuning, and leaves it" *
          doctest::test_suite("cli")) {
  anycl::test::TempDir dir;
  const auto name = std::filesystem::path(anycl::tuning_file_path(anycl::test::runtime().info())).filename();
  const std::string path = (std::filesystem::path(dir.path()) / name).string();
  std::filesystem::create_directory(path);  // a folder where the tuning file goes
  const auto r =
      anycl::test::run_command(fmt::format("ANYCL_CACHE_DIR={} {} tune --quick --shapes 'NN16x16x16/a' 2>&1",
                                           dir.path(), anycl::test::anycl_cli()));
  CHECK(r.exit_code == 1);
  CHECK_MESSAGE(r.output.find(path) != std::string::npos, r.output);
  CHECK_MESSAGE(r.output.find("[1/3]") == std::string::npos, r.output);  // refused before any tuning
  CHECK(std::filesystem::is_directory(path));
  // A cache folder that does not exist yet (a fresh machine) is made, not refused.
  const std::string fresh = dir.file("fresh/cache");
  const auto made = anycl::test::run_command(
      fmt::format("ANYCL_CACHE_DIR={} {} tune --quick --minutes 0.1 --shapes 'NN16x16x16/a' 2>&1", fresh,
                  anycl::test::anycl_cli()));
  CHECK_MESSAGE(made.exit_code == 0, made.output);
  CHECK(std::filesystem::is_regular_file(std::filesystem::path(fresh) / name));
}
