// The profiler (anycl/profile.hpp): a profile of a few training steps is valid Chrome trace JSON
// with every command named, host phases on their own track, and a step breakdown; no profile (and
// no event) without RuntimeOptions::profiling.
#include <doctest/doctest.h>
#include <anycl/blas/blas.hpp>
#include <anycl/data/dataset.hpp>
#include <anycl/profile.hpp>
#include <anycl/train/trainer.hpp>
#include <nlohmann/json.hpp>

#include <map>
#include <set>

#include "helpers.hpp"
#include "indirect_gemm.hpp"

namespace {

anycl::data::Dataset tiny_data(size_t count) {
  anycl::data::Dataset d;
  d.rows = 4, d.cols = 4, d.count = count, d.num_classes = 3;
  for (size_t i = 0; i < count * 16; ++i) d.pixels.push_back(uint8_t((i * 37) % 251));
  for (size_t i = 0; i < count; ++i) d.labels.push_back(uint8_t(i % 3));
  return d;
}

}  // namespace

TEST_CASE("a profile of a few training steps is Chrome trace JSON with every command named") {
  const auto& shared = anycl::test::runtime();
  CHECK(const_cast<anycl::Runtime&>(shared).profile() == nullptr);  // off unless asked for
  anycl::RuntimeOptions options;
  options.profiling = true;
  anycl::Runtime rt(shared.info(), options);
  REQUIRE(rt.profile() != nullptr);

  anycl::Sequential model(16);
  model.dense(8, anycl::Activation::relu).dropout(0.25f).dense(3);
  model.build(rt, 5);
  model.initialize(1);
  auto opt = anycl::make_optimizer(rt, model.parameter_count(), {"rmsprop"});
  anycl::TrainOptions to;
  to.epochs = 1;
  to.batch = 5;
  anycl::Trainer trainer(model, *opt, to);
  const anycl::data::Dataset data = tiny_data(13);  // 3 steps: 5 + 5 + 3 rows
  trainer.fit(data);
  trainer.evaluate(data);

  const auto trace = nlohmann::json::parse(anycl::chrome_trace({&rt}));
  REQUIRE(trace.contains("traceEvents"));
  std::set<std::string> names, categories, tracks;
  std::map<int, std::string> thread_names;
  size_t device_events = 0;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["name"] == "thread_name") thread_names[e["tid"].get<int>()] = e["args"]["name"];
    if (e["ph"] != "X") continue;
    CHECK(e["dur"].get<double>() >= 0);
    CHECK(e["ts"].get<double>() >= 0);
    names.insert(e["name"].get<std::string>());
    categories.insert(e["cat"].get<std::string>());
    if (e["cat"] != "host") ++device_events;
  }
  MESSAGE("events: ", device_events, ", names: ", names.size());
  // Per step: gather, 2 dense forward (GEMM + bias; the first with the dropout fused in), loss,
  // backward (2 bias, the first with the dropout's mask, 2 dW, 1 dX), optimizer.
  CHECK(device_events >= 3 * 12);
  for (const char* want :
       {"batch: gather_batch 5x16", "layer 1 dense forward: SGEMM NN 5x8x16",
        "layer 1 dense forward: bias_activation_dropout_forward n=40",
        "layer 3 dense forward: bias_activation_forward n=15", "loss softmax_cross_entropy: softmax_xent n=",
        "layer 3 dense backward: SGEMM TN 8x3x5", "layer 3 dense backward: bias_activation_backward",
        "layer 1 dense backward: bias_activation_dropout_backward",
        "optimizer rmsprop: rmsprop_update n=", "evaluation"}) {
    bool found = false;
    for (const std::string& n : names) found = found || n.rfind(want, 0) == 0;
    CHECK_MESSAGE(found, std::string(want), " is not among the event names");
  }
  CHECK(categories.count("kernel"));
  CHECK(categories.count("gemm"));
  CHECK(categories.count("host"));
  CHECK(thread_names.size() == 2);  // the queue and the host phases

  const anycl::StepBreakdown b = anycl::step_breakdown(rt.profile()->events());
  CHECK(b.steps == 2);  // the two full steps share one sequence; the partial third differs in shapes
  CHECK(b.rows.size() >= 12);
  CHECK(b.step_ms > 0);
}

namespace {

const anycl::TraceEvent* named(const std::vector<anycl::TraceEvent>& events, const std::string& prefix) {
  for (const auto& e : events)
    if (e.name.rfind(prefix, 0) == 0) return &e;
  return nullptr;
}

uint64_t end_ns(cl_event e) {
  cl_ulong ns = 0;
  REQUIRE(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof ns, &ns, nullptr) == CL_SUCCESS);
  return ns;
}

}  // namespace

// CLBlast hands back its last kernel's event only. Where a call copies into a padded temporary first
// (the indirect kernel at sizes off its tiles), the span starts where the command before it ended, so
// the copies show as the call's time and not as idle gaps in a step breakdown.
TEST_CASE("a CLBlast call with copies of its own is profiled from the end of the command before it") {
  const auto& shared = anycl::test::runtime();
  anycl::RuntimeOptions options;
  options.profiling = true;
  anycl::Runtime rt(shared.info(), options);
  anycl::Profile& profile = *rt.profile();

  SUBCASE("Profile::record with a marker: the span runs from the marker's end to the event's end") {
    cl_command_queue queue = rt.queue();
    cl_event marker = nullptr, last = nullptr;
    REQUIRE(clEnqueueMarkerWithWaitList(queue, 0, nullptr, &marker) == CL_SUCCESS);
    anycl::Tensor work(rt, {512, 512});
    {
      const anycl::ProfileLabel label(&profile, [] { return std::string("between"); });
      work.fill(1.f);  // a command between the marker and the event the span ends at
    }
    REQUIRE(clEnqueueMarkerWithWaitList(queue, 0, nullptr, &last) == CL_SUCCESS);
    clRetainEvent(marker), clRetainEvent(last);  // record releases its references; these read the times
    profile.record(last, "spanned", "gemm", marker);
    rt.finish();
    const auto events = profile.events();
    const anycl::TraceEvent* spanned = named(events, "spanned");
    const anycl::TraceEvent* between = named(events, "between");
    REQUIRE(spanned);
    REQUIRE(between);
    CHECK(spanned->duration_us == doctest::Approx(double(end_ns(last) - end_ns(marker)) * 1e-3));
    CHECK(spanned->duration_us >= between->duration_us);  // the command between lies inside the span
    CHECK(spanned->start_us <= between->start_us);
    clReleaseEvent(marker), clReleaseEvent(last);
  }

  SUBCASE("a GEMM off the indirect kernel's tiles is named with its copies and starts where the fill ended") {
    const anycl::test::IndirectGemmScope indirect(rt);  // MWG = NWG = 32 on any device
    anycl::Tensor a(rt, {40, 40}), b(rt, {40, 40}), c(rt, {40, 40}), whole_a(rt, {64, 64}),
        whole_b(rt, {64, 64}), whole_c(rt, {64, 64});
    for (anycl::Tensor* t : {&a, &b, &whole_a, &whole_b}) t->fill(0.5f);
    {
      const anycl::ProfileLabel label(&profile, [] { return std::string("before"); });
      c.fill(0.f);
    }
    anycl::matmul(a, anycl::Trans::no, b, anycl::Trans::no, c);  // 40 = a tile and 8 rows: copies
    anycl::matmul(whole_a, anycl::Trans::yes, whole_b, anycl::Trans::no, whole_c);  // whole tiles, no copy
    rt.finish();
    const auto events = profile.events();
    const anycl::TraceEvent* before = named(events, "before");
    const anycl::TraceEvent* padded = named(events, "SGEMM NN 40x40x40");
    const anycl::TraceEvent* whole = named(events, "SGEMM TN 64x64x64");
    REQUIRE(before);
    REQUIRE(padded);
    REQUIRE(whole);
    CHECK(padded->name == "SGEMM NN 40x40x40 + its copies");
    CHECK(whole->name == "SGEMM TN 64x64x64");  // one kernel: its own event is the whole call
    CHECK(padded->start_us >= before->start_us + before->duration_us - 1.0);  // device clock, µs
    CHECK(c.download() == std::vector<float>(size_t{40} * 40, 10.f));         // 40 · 0.5 · 0.5
  }
}
