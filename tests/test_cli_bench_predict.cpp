// `anycl bench predict` with tiny counts: the table's structure and its JSON (anycl's row with
// figures; onnxruntime's row with figures where build/onnx-venv has it, else a "not available" row
// and a note), and its usage errors. No timing decides a pass.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "helpers.hpp"

using anycl::test::anycl_cli;
using anycl::test::run_command;

namespace {
constexpr const char* kTiny = " bench predict --model mlp --count 5 --warmup 1 --batches 4 --repeats 1";
}  // namespace

TEST_SUITE_BEGIN("cli");  // the anycl command as a child process (a CTest label: tests/CMakeLists.txt)

TEST_CASE("anycl bench predict --json: anycl's figures through the C API and onnxruntime's beside them") {
  const auto r = run_command(anycl_cli() + kTiny + " --json 2>/dev/null");
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  const auto j = nlohmann::json::parse(r.output);
  CHECK(j.contains("device"));
  const auto& rows = j.at("predict");
  REQUIRE(rows.size() == 2);
  CHECK(rows[0]["model"] == "MLP 784-512-512-10");
  CHECK(rows[0]["engine"] == "anycl C API");
  const double p50 = rows[0]["batch-1 p50 ms"].get<double>(), p99 = rows[0]["batch-1 p99 ms"].get<double>();
  CHECK(p50 > 0);
  CHECK(p99 >= p50);
  CHECK(rows[0]["samples/s @4"].get<double>() > 0);
  const std::string engine = rows[1]["engine"].get<std::string>();
  CHECK(engine.rfind("onnxruntime", 0) == 0);
  if (engine == "onnxruntime: not available") {
    CHECK(rows[1]["batch-1 p50 ms"] == "-");
    MESSAGE("onnxruntime is not installed here (tools/setup.sh installs it into build/onnx-venv)");
  } else {
    CHECK(rows[1]["batch-1 p50 ms"].get<double>() > 0);
    CHECK(rows[1]["samples/s @4"].get<double>() > 0);
  }
}

TEST_CASE("anycl bench predict without onnxruntime says so and still measures anycl") {
  const auto r = run_command("ANYCL_ONNX_PYTHON=/nonexistent/python3 " + anycl_cli() + kTiny);
  REQUIRE_MESSAGE(r.exit_code == 0, r.output);
  CHECK_MESSAGE(r.output.find("batch-1 p50 ms") != std::string::npos, r.output);
  CHECK_MESSAGE(r.output.find("anycl C API") != std::string::npos, r.output);
  CHECK_MESSAGE(r.output.find("onnxruntime: not available") != std::string::npos, r.output);
  CHECK_MESSAGE(r.output.find("onnxruntime left out") != std::string::npos, r.output);
}

TEST_CASE("anycl bench predict refuses bad flags with usage errors") {
  for (const char* flags : {"--model resnet", "--batches 0", "--count 0", "--sizes 4", "extra"}) {
    const auto r = run_command(fmt::format("{} bench predict {}", anycl_cli(), flags));
    CHECK_MESSAGE(r.exit_code == 2, flags, ": ", r.output);
  }
}

TEST_SUITE_END();
