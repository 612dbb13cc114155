// The profiler (anycl/profile.hpp): a profile of a few training steps is valid Chrome trace JSON
// with every command named, host phases on their own track, and a step breakdown; no profile (and
// no event) without RuntimeOptions::profiling.
#include <doctest/doctest.h>
#include <anycl/data/dataset.hpp>
#include <anycl/profile.hpp>
#include <anycl/train/trainer.hpp>
#include <nlohmann/json.hpp>

#include <map>
#include <set>

#include "helpers.hpp"

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
  // Per step: gather, 2 dense forward (GEMM + bias), dropout, loss, backward (2 bias, 2 dW, 1 dX,
  // dropout), optimizer.
  CHECK(device_events >= 3 * 13);
  for (const char* want :
       {"batch: gather_batch 5x16", "layer 1 dense forward: SGEMM NN 5x8x16",
        "layer 1 dense forward: bias_activation_forward n=40",
        "layer 2 dropout forward: dropout_forward_keep n=40", "loss softmax_cross_entropy: softmax_xent n=",
        "layer 3 dense backward: SGEMM TN 8x3x5", "layer 3 dense backward: bias_activation_backward",
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
  CHECK(b.rows.size() >= 13);
  CHECK(b.step_ms > 0);
}
