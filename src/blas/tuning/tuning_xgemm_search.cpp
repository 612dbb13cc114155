// The restricted Xgemm search: enumerate CLBlast's GEMMK=0 space, sample it, time each set through
// the GEMM routine at the model's shapes, keep the fastest exact one.
#include "blas/tuning/tuning_xgemm_search.hpp"

#include <clblast.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <random>

#include "anycl/blas/blas.hpp"
#include "anycl/error.hpp"
#include "blas/clblast_params.hpp"
#include "blas/tuning/tuning_constraints.hpp"

namespace anycl::detail {
namespace {

using Clock = std::chrono::steady_clock;

GemmTuning only(const std::string& kernel, XgemmParams params) {
  GemmTuning t;
  t.kernels[kernel] = std::move(params);
  return t;
}

XgemmParams current(Runtime& rt, const std::string& kernel) {
  std::map<std::string, size_t> p;
  const auto status = clblast_params::retrieve(rt.info().id, kernel, p);
  if (status != clblast::StatusCode::kSuccess)
    throw OpenCLError(int(status), "clblast::RetrieveParameters", kernel);
  return {p.begin(), p.end()};
}

std::string describe(const XgemmParams& p) {
  std::string s;
  for (const auto& [k, v] : p) s += fmt::format(" {}={}", k, v);
  return s;
}

// Seconds for one pass over every shape (median of 3 passes after one that compiles).
double time_shapes(Runtime& rt, const std::vector<GemmShape>& shapes, DeviceBuffer& a, DeviceBuffer& b,
                   DeviceBuffer& c) {
  auto pass = [&] {
    for (const auto& s : shapes)
      gemm(rt, s.trans_a ? Trans::yes : Trans::no, s.trans_b ? Trans::yes : Trans::no, s.m, s.n, s.k, 1.f, a,
           0, s.trans_a ? s.m : s.k, b, 0, s.trans_b ? s.k : s.n, 0.f, c, 0, s.n);
  };
  pass();
  rt.finish();
  std::vector<double> t;
  for (int r = 0; r < 3; ++r) {
    const auto t0 = Clock::now();
    pass();
    rt.finish();
    t.push_back(std::chrono::duration<double>(Clock::now() - t0).count());
  }
  std::sort(t.begin(), t.end());
  return t[1];
}

}  // namespace

std::vector<XgemmParams> xgemm_search_space(const DeviceInfo& device) {
  std::vector<XgemmParams> out;
  const size_t sizes[] = {16, 32, 64, 128}, dims[] = {8, 16, 32}, widths[] = {1, 2, 4, 8};
  for (size_t mwg : sizes)
    for (size_t nwg : sizes)
      for (size_t kwg : {size_t(8), size_t(16), size_t(32)})
        for (size_t mdimc : dims)
          for (size_t ndimc : dims)
            for (size_t mdima : dims)
              for (size_t ndimb : dims)
                for (size_t vwm : widths)
                  for (size_t vwn : widths)
                    for (size_t strm : {0, 1})
                      for (size_t strn : {0, 1})
                        for (size_t sa : {0, 1})
                          for (size_t sb : {0, 1}) {
                            XgemmParams p{{"GEMMK", 0},     {"KREG", 1},      {"KWG", kwg}, {"KWI", 2},
                                          {"MDIMA", mdima}, {"MDIMC", mdimc}, {"MWG", mwg}, {"NDIMB", ndimb},
                                          {"NDIMC", ndimc}, {"NWG", nwg},     {"SA", sa},   {"SB", sb},
                                          {"STRM", strm},   {"STRN", strn},   {"VWM", vwm}, {"VWN", vwn}};
                            if (!tuning_constraint_violation(only("Xgemm", p)).empty()) continue;
                            if (mdimc * ndimc > device.max_work_group_size) continue;
                            const size_t local = (sa ? kwg * mwg : 0) + (sb ? kwg * nwg : 0);
                            if (local * sizeof(float) > device.local_mem_bytes) continue;
                            out.push_back(std::move(p));
                          }
  return out;
}

XgemmParams search_xgemm(Runtime& rt, const std::vector<GemmShape>& shapes, double fraction,
                         const std::function<void(const std::string&)>& say) {
  std::vector<XgemmParams> space = xgemm_search_space(rt.info());
  std::mt19937 rng(1);  // the same sample on every run of the same space
  std::shuffle(space.begin(), space.end(), rng);
  const size_t count =
      std::clamp<size_t>(size_t(std::lround(fraction * double(space.size()))), 8, space.size());
  const XgemmParams defaults = current(rt, "Xgemm"), routine = current(rt, "GemmRoutine");
  std::vector<XgemmParams> tried(space.begin(), space.begin() + long(count));
  tried.insert(tried.begin(), defaults);
  say(
      fmt::format("      {} of {} GEMMK=0 parameter sets (CLBlast's current ones first), timed through the "
                  "GEMM routine at the model's {} shapes",
                  tried.size(), space.size(), shapes.size()));
  size_t biggest = 0;
  for (const auto& s : shapes) biggest = std::max({biggest, s.m * s.k, s.k * s.n, s.m * s.n});
  DeviceBuffer a(rt, biggest * sizeof(float), "Xgemm search input A"),
      b(rt, biggest * sizeof(float), "Xgemm search input B"),
      c(rt, biggest * sizeof(float), "Xgemm search C");
  apply_tuning(rt, only("GemmRoutine", {{"XGEMM_MIN_INDIRECT_SIZE", 1}}));  // always indirect
  std::vector<std::pair<double, size_t>> timed;
  for (size_t i = 0; i < tried.size(); ++i) {
    try {
      apply_tuning(rt, only("Xgemm", tried[i]));
      const double t = time_shapes(rt, shapes, a, b, c);
      timed.emplace_back(t, i);
      say(fmt::format("      {:>3}/{}: {:8.3f} ms{}", i + 1, tried.size(), t * 1e3, describe(tried[i])));
    } catch (const Error& e) {
      say(fmt::format("      {:>3}/{}: failed ({}){}", i + 1, tried.size(), e.what(), describe(tried[i])));
    }
  }
  std::sort(timed.begin(), timed.end());
  std::string why = "no parameter set ran";
  for (const auto& [t, i] : timed) {
    apply_tuning(rt, only("Xgemm", tried[i]));
    why = gemm_mismatch(rt, shapes);
    if (why.empty()) {
      const auto base = std::find_if(timed.begin(), timed.end(), [](auto& x) { return x.second == 0; });
      say(fmt::format("      fastest exact set: {:.3f} ms per pass (CLBlast's current: {}){}", t * 1e3,
                      base == timed.end() ? "failed" : fmt::format("{:.3f} ms", base->first * 1e3),
                      describe(tried[i])));
      apply_tuning(rt, only("Xgemm", defaults));
      apply_tuning(rt, only("GemmRoutine", routine));
      return tried[i];
    }
    say(fmt::format("      refused (wrong results: {}){}", why, describe(tried[i])));
  }
  apply_tuning(rt, only("Xgemm", defaults));
  apply_tuning(rt, only("GemmRoutine", routine));
  throw Error(
      fmt::format("no Xgemm parameter set computed exact results on {} (last: {})", rt.info().name, why));
}

}  // namespace anycl::detail
