// Tuning candidates measured in child processes of the worker program (see the header). The parent
// hands a child a private file of candidates and reads the child's results file while it runs, so
// progress is live and a crash is pinned on the candidate whose "start" line has no result.
#include "blas/tuning/tune_worker.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include <filesystem>

#include "anycl/blas/tune.hpp"
#include "anycl/error.hpp"
#include "anycl/util/bounded_read.hpp"
#include "util/platform.hpp"
#include "util/process.hpp"

namespace anycl::detail {
namespace fs = std::filesystem;
using platform::ProcessSpec;
namespace {

constexpr const char* kMagic = "anycl-tune-candidates 1";
#ifdef SIGKILL
constexpr int kKill = SIGKILL;
#else
constexpr int kKill = 9;  // Windows has no SIGKILL: BackgroundProcess::stop terminates the process
#endif

std::string one_line(std::string s) {
  for (char& c : s)
    if (c == '\n' || c == '\r') c = ' ';
  return s;
}

struct Batch {
  double best = 0, budget = 0;
  std::vector<GemmShape> shapes;
  std::vector<size_t> indices;  // each candidate's index in the parent's list
  std::vector<TuningCandidate> candidates;
};

void write_batch(const std::string& path, const Batch& b) {
  std::string text = fmt::format("{}\nbest {:.9g}\nbudget {:.9g}\nshapes {}\n", kMagic,
                                 std::min(b.best, 1e30), b.budget, format_gemm_shapes(b.shapes));
  for (size_t i = 0; i < b.candidates.size(); ++i) {
    text += fmt::format("candidate {} {}", b.indices[i], b.candidates[i].kernel);
    for (const auto& [k, v] : b.candidates[i].params) text += fmt::format(" {}={}", k, v);
    text += "\n";
  }
  std::ofstream(path) << text;
}

Batch read_batch(const std::string& path) {
  std::istringstream in(read_text_file_bounded(path, kMaxTextFileBytes, "tuning candidates"));
  std::string line;
  if (!std::getline(in, line) || line != kMagic) throw DataError(path + ": not an anycl candidates file");
  Batch b;
  while (std::getline(in, line)) {
    std::istringstream words(line);
    std::string tag;
    words >> tag;
    if (tag == "best") {
      words >> b.best;
    } else if (tag == "budget") {
      words >> b.budget;
    } else if (tag == "shapes") {
      std::string rest;
      std::getline(words >> std::ws, rest);
      b.shapes = parse_gemm_shapes(rest);
    } else if (tag == "candidate") {
      size_t index = 0;
      TuningCandidate c;
      words >> index >> c.kernel;
      for (std::string kv; words >> kv;) {
        const auto eq = kv.find('=');
        if (eq == std::string::npos) throw DataError(path + ": bad parameter '" + kv + "'");
        c.params[kv.substr(0, eq)] = size_t(std::stoull(kv.substr(eq + 1)));
      }
      b.indices.push_back(index);
      b.candidates.push_back(std::move(c));
    }
  }
  return b;
}

// The complete lines of `path` from `offset` on (advanced past them).
std::vector<std::string> new_lines(const std::string& path, std::streamoff& offset) {
  std::ifstream in(path, std::ios::binary);
  std::vector<std::string> lines;
  if (!in) return lines;
  in.seekg(offset);
  std::string line;
  while (std::getline(in, line)) {
    if (in.eof()) break;  // no newline yet: the child is still writing it
    offset += std::streamoff(line.size() + 1);
    lines.push_back(line);
  }
  return lines;
}

}  // namespace

ScratchDir::ScratchDir() {
  // A fresh name, created exclusively, private to us.
  std::error_code ec;
  const fs::path tmp = fs::temp_directory_path(ec);
  if (ec) throw Error("cannot find the system's temporary folder: " + ec.message() + " — check TMPDIR/TEMP");
  path_ = platform::create_private_folder(tmp, "anycl-child-", ec);
  if (ec)
    throw IoError(
        fmt::format("cannot create a folder in {}: {} — check TMPDIR/TEMP", tmp.string(), ec.message()));
}

ScratchDir::~ScratchDir() {
  std::error_code ignored;
  fs::remove_all(path_, ignored);
}

std::string describe_exit(const platform::ProcessExit& e) {
  if (e.signal) return "killed by " + platform::signal_name(e.signal);
  return fmt::format("exit code {}", e.code);
}

}  // namespace anycl::detail

namespace anycl {

std::string format_gemm_shapes(const std::vector<GemmShape>& shapes) {
  std::string out;
  for (const auto& s : shapes)
    out += fmt::format("{}{}{}{}x{}x{}{}{}/{}", out.empty() ? "" : ";", s.trans_a ? 'T' : 'N',
                       s.trans_b ? 'T' : 'N', s.m, s.n, s.k, s.count > 1 ? fmt::format("*{}", s.count) : "",
                       s.transposes_a ? "^" : "", s.label);
  return out;
}

std::vector<GemmShape> parse_gemm_shapes(const std::string& text) {
  std::vector<GemmShape> shapes;
  std::istringstream in(text);
  for (std::string item; std::getline(in, item, ';');) {
    GemmShape s;
    const auto slash = item.find('/');
    char ta = 0, tb = 0, x1 = 0, x2 = 0;
    std::istringstream dims(item.substr(0, slash));
    bool ok = slash != std::string::npos && (dims >> ta >> tb >> s.m >> x1 >> s.n >> x2 >> s.k);
    if (ok && dims.peek() == '*') ok = dims.get() && (dims >> s.count) && s.count > 0 && s.count <= 1u << 20;
    if (ok && dims.peek() == '^') s.transposes_a = dims.get() == '^';
    if (!ok || dims.peek() != std::char_traits<char>::eof() || x1 != 'x' || x2 != 'x' ||
        (ta != 'N' && ta != 'T') || (tb != 'N' && tb != 'T') || !s.m || !s.n || !s.k)
      throw ValidationError(
          "GEMM shapes: '" + item +
          "' is not a GEMM shape like NT128x512x784/label (TN64x288x4608*16/label: 16 calls a step; "
          "NN128x512x784^/label: a Dense product, TN over transposes on the indirect kernel)");
    s.trans_a = ta == 'T', s.trans_b = tb == 'T', s.label = item.substr(slash + 1);
    shapes.push_back(s);
  }
  if (shapes.empty()) throw ValidationError("GEMM shapes: none given");
  return shapes;
}

}  // namespace anycl

namespace anycl::detail {

CandidateMeasurer child_measurer(const std::string& worker, const DeviceInfo& device,
                                 const std::vector<GemmShape>& shapes, std::function<bool()> stopped) {
  return [worker, device, shapes, stopped](const std::vector<TuningCandidate>& candidates, double best,
                                           double budget,
                                           const std::function<void(const CandidateResult&)>& on_result) {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    const ScratchDir dir;
    std::map<size_t, bool> remaining;
    for (size_t i = 0; i < candidates.size(); ++i) remaining[i] = true;
    while (!remaining.empty() && !stopped()) {
      const double left = budget - std::chrono::duration<double>(Clock::now() - start).count();
      if (left <= 0) break;
      Batch batch{best, left, shapes, {}, {}};
      for (const auto& [i, unused] : remaining)
        batch.indices.push_back(i), batch.candidates.push_back(candidates[i]);
      const std::string in = dir.file("candidates.txt"), out = dir.file("results.txt");
      write_batch(in, batch);
      std::remove(out.c_str());
      ProcessSpec spec;
      spec.args = {worker, "measure", std::to_string(device.index), in, out};
      platform::BackgroundProcess child(spec, dir.file("worker.log"));
      platform::ProcessExit exit;
      std::atomic<bool> done{false};
      std::thread waiter([&] {
        const auto e = child.wait();
        exit.code = e.code, exit.signal = e.signal;
        done = true;
      });
      std::streamoff offset = 0;
      long started = -1;
      size_t results_here = 0;  // results this child delivered
      auto take = [&] {
        for (const std::string& line : new_lines(out, offset)) {
          std::istringstream words(line);
          std::string tag;
          CandidateResult r;
          words >> tag >> r.index;
          if (tag == "start") {
            started = long(r.index);
          } else if (tag == "result" && remaining.count(r.index)) {
            int exact = 0;
            size_t times = 0;
            words >> r.seconds >> exact >> times;
            r.exact = exact != 0;
            for (double t = 0; r.shape_seconds.size() < std::min<size_t>(times, 4096) && words >> t;)
              r.shape_seconds.push_back(t);
            std::getline(words >> std::ws, r.error);
            if (r.exact && r.seconds < best) best = r.seconds;
            remaining.erase(r.index);
            started = -1;
            ++results_here;
            on_result(r);
          }
        }
      };
      bool asked_to_stop = false, out_of_time = false;
      while (!done) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        take();
        if (!asked_to_stop && stopped()) child.stop(SIGINT), asked_to_stop = true;  // not only a Ctrl-C
        // The stage's time is a bound, not a hint: a candidate still compiling when it is spent is
        // abandoned (one set can take minutes to compile on a CPU), once the stage has a result.
        const double spent = std::chrono::duration<double>(Clock::now() - start).count();
        if (!asked_to_stop && spent > budget && best < 1e30)
          child.stop(kKill), asked_to_stop = out_of_time = true;
      }
      waiter.join();
      take();
      if (out_of_time || (exit.code == 0 && exit.signal == 0) || exit.signal == SIGINT ||
          exit.signal == SIGTERM)
        break;
      if (started < 0 && results_here > 0) break;  // it failed after its last result (e.g. at exit): done
      if (started < 0)  // it failed before any candidate: nothing to blame, nothing to retry
        throw Error(
            fmt::format("the tuning child process on {} failed ({}) before its first candidate: {}",
                        device.name, describe_exit(exit),
                        one_line(read_text_file_bounded(dir.file("worker.log"), kMaxTextFileBytes, "log"))));
      CandidateResult crashed;
      crashed.index = size_t(started);
      crashed.error = fmt::format("the driver crashed on it ({})", describe_exit(exit));
      remaining.erase(crashed.index);
      on_result(crashed);
    }
  };
}

int run_measure_worker(const DeviceInfo& device, const std::string& in, const std::string& out) {
  const Batch batch = read_batch(in);
  RuntimeOptions options;
  options.device_spec = std::to_string(device.index);
  options.apply_stored_tuning = false;
  Runtime rt(options);
  const auto crash_at = platform::get_env("ANYCL_TEST_CRASH_CANDIDATE");
  const auto hang_at = platform::get_env("ANYCL_TEST_HANG_CANDIDATE");
  std::FILE* f = std::fopen(out.c_str(), "a");
  if (!f) throw IoError("cannot write " + out + " — check the temporary folder (TMPDIR)");
  auto put = [&](const std::string& line) {
    std::fputs(line.c_str(), f);
    std::fflush(f);
  };
  measure_candidates(
      rt, batch.candidates, batch.shapes, batch.best, batch.budget,
      [&](size_t i) {
        put(fmt::format("start {}\n", batch.indices[i]));
        // Fault injection for the test of a crashing candidate: the child dies as a driver would.
        if (crash_at && *crash_at == std::to_string(batch.indices[i])) std::abort();
        // ... and for the test of the stage's time bound: it compiles for ever.
        if (hang_at && *hang_at == std::to_string(batch.indices[i]))
          std::this_thread::sleep_for(std::chrono::hours(24));
      },
      [&](const CandidateResult& r) {
        std::string times = std::to_string(r.shape_seconds.size());
        for (double t : r.shape_seconds) times += fmt::format(" {:.9g}", t);
        put(fmt::format("result {} {:.9g} {} {} {}\n", batch.indices[r.index], r.seconds, r.exact ? 1 : 0,
                        times, one_line(r.error)));
      });
  std::fclose(f);
  return 0;
}

}  // namespace anycl::detail
