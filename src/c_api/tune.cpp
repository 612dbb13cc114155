// Tuning through the C API (anycl_tune): the library's tune() at the model's GEMMs, with the
// caller's callback seeing each progress line and able to stop it, keeping the best set found.
#include <fmt/format.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>

#include "anycl/blas/tune.hpp"
#include "anycl/error.hpp"
#include "anycl/nn/sequential.hpp"
#include "c_api/contract.hpp"
#include "c_api/handles.hpp"

using namespace anycl::detail::c_api;

namespace {

// anycl_tune_result as API version 4 had it: up to ms_after.
constexpr size_t kTuneResultV4 = offsetof(anycl_tune_result, kept_entry);

// `text` into `out`, NUL-terminated, cut at its capacity less one (at a UTF-8 character's start).
template <size_t N>
void copy_cut(const std::string& text, char (&out)[N]) {
  size_t n = std::min(text.size(), N - 1);
  while (n > 0 && n < text.size() && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80) --n;
  std::memcpy(out, text.data(), n);
  out[n] = '\0';
}

// The result's fields up to the caller's struct_size (a caller built against an older header has
// a shorter struct).
void write_result(anycl_tune_result* out, const anycl_tune_result& r) {
  if (!out) return;
  const size_t size = std::min(out->struct_size, sizeof(anycl_tune_result));
  std::memcpy(reinterpret_cast<char*>(out) + sizeof(size_t),
              reinterpret_cast<const char*>(&r) + sizeof(size_t), size - sizeof(size_t));
}

}  // namespace

extern "C" {

void anycl_tune_options_init(anycl_tune_options* options) {
  if (!options) return;
  *options = anycl_tune_options{};
  options->struct_size = sizeof(anycl_tune_options);
  options->batch = 128;
}

void anycl_tune_result_init(anycl_tune_result* result) {
  if (!result) return;
  *result = anycl_tune_result{};
  result->struct_size = sizeof(anycl_tune_result);
}

anycl_status anycl_tune(anycl_model* model, anycl_runtime* runtime, const anycl_tune_options* options,
                        anycl_tune_result* result) {
  return guarded([&] {
    require(model, "anycl_tune", "model");
    require(runtime, "anycl_tune", "runtime");
    anycl_tune_options o;
    anycl_tune_options_init(&o);
    if (options) {
      check_struct_size("anycl_tune", options->struct_size, sizeof(anycl_tune_options),
                        "anycl_tune_options_init");
      o = *options;
    }
    if (result)  // version 4's result ends before kept_entry: accepted, written up to its size
      check_struct_size("anycl_tune", result->struct_size, {kTuneResultV4}, sizeof(anycl_tune_result),
                        "anycl_tune_result_init");
    check_finite_option("anycl_tune", "minutes", o.minutes);
    if (o.minutes < 0)
      throw anycl::ValidationError(
          fmt::format("anycl_tune: minutes is {} — pass 0 for the default or a positive time", o.minutes));
    if (o.batch == 0 || o.batch > (size_t(1) << 20))
      throw anycl::ValidationError(fmt::format(
          "anycl_tune: batch is {} — pass the batch the model trains at (1 to 1048576)", o.batch));
    const auto locks = lock_for_work(*model, *runtime, "anycl_tune");
    anycl::Runtime& rt = *runtime->rt;
    anycl::TuneSettings settings;
    settings.quick = o.quick != 0 || o.first_use != 0;
    settings.minutes = o.minutes;
    // The GEMMs a step runs on this device, as training runs them there: judged under the database's
    // sets for them (a CNN's `large` sets, as the tuning's baseline applies them), which a
    // convolution's dW padding follows.
    const anycl::Sequential shaped(model->saved.spec);
    settings.shapes = anycl::model_gemm_shapes(shaped, o.batch, &rt);
    if (!o.first_use)
      if (const auto entry = anycl::database_tuning(rt.info(), nullptr, nullptr, &settings.shapes)) {
        anycl::apply_tuning(rt, *entry);
        settings.shapes = anycl::model_gemm_shapes(shaped, o.batch, &rt);
      }
    size_t candidates = 0;
    if (o.on_progress)
      settings.progress = [&](const anycl::TuneProgress& p) {
        candidates = p.candidates;
        const anycl_tune_progress c{p.line.c_str(), p.stage.c_str(), p.candidates, p.best_seconds, p.seconds};
        return o.on_progress(&c, o.user) == 0;
      };
    anycl_tune_result r{};
    r.struct_size = sizeof(r);
    std::optional<anycl::TuneReport> report;
    if (o.first_use) {
      if (!anycl::first_use_tuning_skipped(rt.info()).empty()) return write_result(result, r);
      report = anycl::tune_on_first_use(rt, settings.shapes, settings.progress);
    } else {
      report = anycl::tune(rt, settings);
    }
    model->forget_built();  // built on the parameters it had: the next call builds on the new ones
    if (!report) return write_result(result, r);
    r.tuned = 1;
    r.stopped = report->stopped ? 1 : 0;
    r.candidates = candidates;
    r.seconds = report->tuning.seconds;
    r.ms_before = report->tuning.seconds_before * 1e3;
    r.ms_after = report->stopped ? 0 : report->tuning.seconds_after * 1e3;
    r.kept_entry = report->kept_entry ? 1 : 0;
    copy_cut(report->against, r.against);
    write_result(result, r);
  });
}

anycl_status anycl_first_use_tuning_skipped(const anycl_runtime* runtime, char* buffer, size_t capacity,
                                            size_t* length) {
  return guarded([&] {
    require(runtime, "anycl_first_use_tuning_skipped", "runtime");
    copy_text(anycl::first_use_tuning_skipped(runtime->rt->info()), buffer, capacity, length,
              "anycl_first_use_tuning_skipped");
  });
}

anycl_status anycl_tuning_file_path(const anycl_runtime* runtime, char* buffer, size_t capacity,
                                    size_t* length) {
  return guarded([&] {
    require(runtime, "anycl_tuning_file_path", "runtime");
    copy_text(anycl::tuning_file_path(runtime->rt->info()), buffer, capacity, length,
              "anycl_tuning_file_path");
  });
}

}  // extern "C"
