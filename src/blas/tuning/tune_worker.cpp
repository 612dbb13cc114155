// Tuning candidates measured in child processes (see the header). The parent hands a child a
// private file of candidates and reads the child's results file while it runs, so progress is live
// and a crash is pinned on the candidate whose "start" line has no result.
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

#include "anycl/error.hpp"
#include "anycl/util/bounded_read.hpp"
#include "args.hpp"
#include "child_process.hpp"
#include "util/platform.hpp"
#include "util/process.hpp"

namespace anycl::cli {
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
                                 std::min(b.best, 1e30), b.budget, format_shapes(b.shapes));
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
  if (!std::getline(in, line) || line != kMagic) throw UsageError(path + ": not an anycl candidates file");
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
      b.shapes = parse_shapes(rest);
    } else if (tag == "candidate") {
      size_t index = 0;
      TuningCandidate c;
      words >> index >> c.kernel;
      for (std::string kv; words >> kv;) {
        const auto eq = kv.find('=');
        if (eq == std::string::npos) throw UsageError(path + ": bad parameter '" + kv + "'");
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

std::string format_shapes(const std::vector<GemmShape>& shapes) {
  std::string out;
  for (const auto& s : shapes)
    out += fmt::format("{}{}{}{}x{}x{}{}{}/{}", out.empty() ? "" : ";", s.trans_a ? 'T' : 'N',
                       s.trans_b ? 'T' : 'N', s.m, s.n, s.k, s.count > 1 ? fmt::format("*{}", s.count) : "",
                       s.transposes_a ? "^" : "", s.label);
  return out;
}

std::vector<GemmShape> parse_shapes(const std::string& text) {
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
      throw UsageError(
          "--shapes: '" + item +
          "' is not a GEMM shape like NT128x512x784/label (TN64x288x4608*16/label: 16 calls a step; "
          "NN128x512x784^/label: a Dense product, TN over transposes on the indirect kernel)");
    s.trans_a = ta == 'T', s.trans_b = tb == 'T', s.label = item.substr(slash + 1);
    shapes.push_back(s);
  }
  if (shapes.empty()) throw UsageError("--shapes: no GEMM shapes given");
  return shapes;
}

CandidateMeasurer child_measurer(const DeviceInfo& device, const std::vector<GemmShape>& shapes,
                                 const std::atomic<bool>* stop) {
  return [device, shapes, stop](const std::vector<TuningCandidate>& candidates, double best, double budget,
                                const std::function<void(const CandidateResult&)>& on_result) {
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    const ScratchDir dir;
    std::map<size_t, bool> remaining;
    for (size_t i = 0; i < candidates.size(); ++i) remaining[i] = true;
    while (!remaining.empty() && !(stop && *stop)) {
      const double left = budget - std::chrono::duration<double>(Clock::now() - start).count();
      if (left <= 0) break;
      Batch batch{best, left, shapes, {}, {}};
      for (const auto& [i, unused] : remaining)
        batch.indices.push_back(i), batch.candidates.push_back(candidates[i]);
      const std::string in = dir.file("candidates.txt"), out = dir.file("results.txt");
      write_batch(in, batch);
      std::remove(out.c_str());
      ProcessSpec spec;
      spec.args = {this_executable(), "tune", "--device",  std::to_string(device.index),
                   "--measure",       in,     "--results", out};
      detail::platform::BackgroundProcess child(spec, dir.file("worker.log"));
      ChildExit exit;
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
        if (stop && *stop && !asked_to_stop) child.stop(SIGINT), asked_to_stop = true;  // not only a Ctrl-C
        // The stage's time is a bound, not a hint: a candidate still compiling when it is spent is
        // abandoned (one set can take minutes to compile on a CPU), once the stage has a result.
        const double spent = std::chrono::duration<double>(Clock::now() - start).count();
        if (!asked_to_stop && spent > budget && best < 1e30)
          child.stop(kKill), asked_to_stop = out_of_time = true;
      }
      waiter.join();
      take();
      if (out_of_time || exit.ok() || exit.signal == SIGINT || exit.signal == SIGTERM) break;
      if (started < 0 && results_here > 0) break;  // it failed after its last result (e.g. at exit): done
      if (started < 0)  // it failed before any candidate: nothing to blame, nothing to retry
        throw Error(
            fmt::format("the tuning child process on {} failed ({}) before its first candidate: {}",
                        device.name, exit.describe(),
                        one_line(read_text_file_bounded(dir.file("worker.log"), kMaxTextFileBytes, "log"))));
      CandidateResult crashed;
      crashed.index = size_t(started);
      crashed.error = fmt::format("the driver crashed on it ({})", exit.describe());
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
  const auto crash_at = detail::platform::get_env("ANYCL_TEST_CRASH_CANDIDATE");
  const auto hang_at = detail::platform::get_env("ANYCL_TEST_HANG_CANDIDATE");
  std::FILE* f = std::fopen(out.c_str(), "a");
  if (!f) throw Error("cannot write " + out + " — check the temporary folder (TMPDIR)");
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

}  // namespace anycl::cli
