// `anycl tune`: searches CLBlast's GEMM parameters for the selected device at a model's shapes
// (shortlist, then neighbours of the best; `--quick`: the shortlist only, as first-use tuning does)
// and stores them where every later Runtime on that device applies them.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <optional>

#include "anycl/blas/tune.hpp"
#include "anycl/error.hpp"
#include "anycl/nn/model_from_flags.hpp"
#include "anycl/util/atomic_file.hpp"
#include "args.hpp"
#include "child_process.hpp"
#include "commands.hpp"
#include "device_flag.hpp"
#include "train_resume.hpp"

namespace anycl::cli {

namespace {

// A model to tune at (--model, --layers), its shapes' labels prefixed where --model names two.
struct TuneModel {
  std::string prefix;
  ModelSpec spec;
};

// The GEMMs one step of each model runs on rt's device at `batch` rows, as training runs them there:
// judged under the database's sets for them (a CNN's `large` sets, as the tuning's baseline applies
// them), which a convolution's dW padding follows.
std::vector<GemmShape> shapes_on(Runtime& rt, const std::vector<TuneModel>& models, size_t batch) {
  auto shapes = [&] {
    std::vector<GemmShape> all;
    for (const TuneModel& m : models)
      for (GemmShape s : model_gemm_shapes(Sequential(m.spec), batch, &rt)) {
        s.label = m.prefix + s.label;
        all.push_back(s);
      }
    return all;
  };
  std::vector<GemmShape> first = shapes();
  if (const auto entry = database_tuning(rt.info(), nullptr, nullptr, &first)) {
    apply_tuning(rt, *entry);
    return shapes();
  }
  return first;
}

// The tuning in this process through the library (anycl::tune: candidates in child processes of the
// tuning worker, the result stored at `path`); this prints what it says, and stops it on Ctrl-C.
// Without --shapes, at the GEMMs of `models` on the device.
int tune_here(const DeviceInfo& device, const std::string& path, TuneSettings settings,
              const std::vector<TuneModel>& models, size_t batch) {
  RuntimeOptions rt_options;
  rt_options.device_spec = std::to_string(device.index);
  rt_options.apply_stored_tuning = false;  // no earlier tuning file: the baseline is the database entry
  Runtime rt(rt_options);
  if (settings.shapes.empty()) settings.shapes = shapes_on(rt, models, batch);
  if (settings.shapes.empty())
    throw UsageError("the model runs no GEMM on " + device.name + ": nothing to tune (--layers)");
  settings.stop = &install_stop_handlers();
  settings.progress = [](const TuneProgress& p) {
    fmt::print("{}\n", p.line);
    std::fflush(stdout);
    return true;
  };
  const TuneReport report = tune(rt, settings);
  if (report.stopped) {
    fmt::print(stderr, "anycl tune: interrupted; {} — run `anycl tune` again to continue\n",
               report.tuning.kernels.empty()
                   ? "nothing was stored in " + path
                   : "the finished stages and the best set found so far are stored in " + path);
    return stop_exit_code();
  }
  const GemmTuning& t = report.tuning;
  if (report.kept_entry)
    fmt::print(
        "tuned in {:.0f} s: nothing beat {} by 5 % ({:.3f} ms per pass), so they are kept; stored in {} "
        "(`anycl tune --show` lists it, `--reset` removes it)\n",
        t.seconds, report.against, t.seconds_before * 1e3, path);
  else
    fmt::print(
        "tuned in {:.0f} s: the model's GEMMs take {:.3f} → {:.3f} ms per pass against {} ({:.2f}x); stored "
        "in {} (`anycl tune --show` lists it, `--reset` removes it)\n",
        t.seconds, t.seconds_before * 1e3, t.seconds_after * 1e3, report.against,
        t.seconds_before / t.seconds_after, path);
  return 0;
}

}  // namespace

int run_tune(int argc, char** argv) {
  const Args args(argc, argv, 2,
                  {"--device", "--minutes", "--layers", "--features", "--classes", "--batch", "--check",
                   "--model", "--shapes"},
                  {"--show", "--reset", "--help", "--export", "--quick"});
  if (args.has("--help")) {
    fmt::print(
        "usage: anycl tune [--quick] [--minutes M] [--show] [--reset] [--export] [--device SPEC]\n"
        "                  [--model mlp|cnn|mlp,cnn] [--layers LIST] [--features N] [--classes N] [--batch "
        "N]\n"
        "  Tunes CLBlast's GEMM kernels (XgemmDirect, Xgemm, the direct/indirect switch) and the dense\n"
        "  layers' dx layout for the device at the shapes of the model `anycl train` would build from the\n"
        "  same --model, --layers (default 512,512), --features (default 784; a square is taken as square\n"
        "  1-channel images, so convolution layers fit), --classes (default 10) and --batch (default 128),\n"
        "  and stores the parameters in a per-device file in the cache folder; every later start on this\n"
        "  device (same driver) applies them.\n"
        "  Each kernel's stage times a shortlist of known-good parameter sets (CLBlast's own, every set of\n"
        "  anycl's tuning database), then the neighbours of the best exact set, moving while one is\n"
        "  faster, until the stage's time is spent. Every candidate runs in a child process: a driver crash\n"
        "  costs one candidate. Ctrl-C keeps the best exact set found so far; `anycl tune` again continues.\n"
        "  --quick         the shortlists only (about two minutes on a 2-core CPU): what `anycl train` runs\n"
        "                  by itself on first use of a device with neither a tuning nor a specific\n"
        "                  database entry, if a CPU (--no-autotune or ANYCL_AUTOTUNE=off there to skip\n"
        "                  it; ANYCL_AUTOTUNE=on runs it on a GPU too)\n"
        "  --model mlp,cnn one tuning for both reference models' GEMMs (how the database entries are made)\n"
        "  --minutes M     time for the tuning (default 8; 16 with a CNN; 1.6 with --quick): the direct\n"
        "                  stage gets half of it (three quarters with --quick), the indirect stage about a\n"
        "                  third (a quarter); a candidate still compiling when its stage's time is spent\n"
        "                  is dropped\n"
        "  --show          print the stored parameters for the device, tune nothing\n"
        "  --export        print the stored parameters as an entry of anycl's tuning database\n"
        "                  (tuning/*.txt; see docs/tuning.md) to contribute, tune nothing\n"
        "  --reset         remove the stored parameters (the database entry or CLBlast's defaults apply)\n"
        "  --check FILE    check the CLBlast parameters in a tuning file on the device (exact GEMMs at the\n"
        "                  model's shapes), in a child process: a driver crash refuses them; tunes nothing\n"
        "  A complete earlier tuning stays in use until a new one is complete. ANYCL_TUNING=off ignores a\n"
        "  stored file. Without a file of its own, a device gets the matching entry of the tuning database\n"
        "  shipped with anycl, once it passed the exact GEMM check (ANYCL_TUNING_DATABASE=off: CLBlast's\n"
        "  defaults instead).\n");
    return 0;
  }
  if (!args.positional().empty()) throw UsageError("unexpected argument '" + args.positional().front() + "'");
  TuneSettings options;
  // --model mlp, cnn, or both (mlp,cnn: one tuning for the union of their GEMMs, as the database's
  // entries are made); --layers replaces the preset's layers.
  const std::string preset = args.get("--model", "mlp");
  if (preset != "mlp" && preset != "cnn" && preset != "mlp,cnn")
    throw UsageError("--model must be mlp, cnn or mlp,cnn, got '" + preset + "' (other shapes: --layers)");
  const size_t features = size_t(args.get_int("--features", 784, 1, 1 << 24));
  const size_t classes = size_t(args.get_int("--classes", 10, 1, 1 << 24));
  const size_t batch = size_t(args.get_int("--batch", 128, 1, 1 << 20));
  // Square single-channel images when --features is a square (784: 28×28, as the default data set),
  // so convolution layers fit; a flat input otherwise.
  const auto side = size_t(std::lround(std::sqrt(double(features))));
  const Shape input = side * side == features ? Shape{1, side, side} : Shape{features};
  options.shapes.clear();  // the models' shapes on the device (tune_here), unless --shapes gives them
  std::vector<TuneModel> models;
  for (const char* name : {"mlp", "cnn"}) {
    if (preset.find(name) == std::string::npos) continue;
    ModelFlags model;
    model.layers = args.get("--layers", std::string(name) == "cnn" ? kReferenceCnnLayers : "512,512");
    try {
      models.push_back({preset.size() > 3 ? std::string(name) + " " : std::string(),
                        model_from_flags(model, input, classes)});
      model_gemm_shapes(Sequential(models.back().spec), batch, nullptr);  // a model that does not fit: now
    } catch (const ValidationError& e) {
      throw UsageError(e.what());  // names the flag
    }
  }
  if (args.has("--shapes")) {  // the train command's model
    try {
      options.shapes = parse_gemm_shapes(args.get("--shapes"));
    } catch (const ValidationError& e) {
      throw UsageError(std::string("--shapes: ") + e.what());
    }
  }
  options.quick = args.has("--quick");
  // Default (0): about 95 s of shortlists with --quick (what first-use tuning costs); a full tune: the
  // shortlists, then the neighbour search, for 8 minutes (16 with a CNN's GEMMs). Each stage's time is a
  // bound.
  options.minutes = args.get_double("--minutes", 0, 0.05, 24 * 60);
  const DeviceInfo device = select_device_or_usage_error(args);
  const std::string path = tuning_file_path(device);
  if (path.empty())
    throw Error(
        "the cache is off (ANYCL_CACHE=off), so there is nowhere to store tuning — unset ANYCL_CACHE");

  if (args.has("--reset")) {
    std::error_code ec;
    const bool removed = std::filesystem::remove(path, ec);
    if (ec) throw Error(fmt::format("cannot remove {}: {} — check its permissions", path, ec.message()));
    fmt::print("{} {}\n", removed ? "removed" : "no tuning stored at", path);
    return 0;
  }
  if (args.has("--export")) {
    std::string why;
    const auto t = load_tuning(path, &why);
    if (!t)
      throw Error(fmt::format("{}: nothing to export ({}) — run `anycl tune` on this device first",
                              device.name, why));
    fmt::print("{}", database_entry(*t, device));
    return 0;
  }
  if (args.has("--show")) {
    std::string why;
    const auto t = load_tuning(path, &why);
    if (!t) {
      std::string entry;
      if (database_tuning(device, &entry))
        fmt::print(
            "{}: no tuning of its own ({}); anycl's tuning database entry {} applies once it passes the "
            "exact GEMM check — run `anycl tune` to tune locally\n",
            device.name, why, entry);
      else
        fmt::print("{}: no usable tuning ({}); CLBlast's defaults apply — run `anycl tune`\n", device.name,
                   why);
      return 0;
    }
    fmt::print("{} (driver {}), tuned in {:.0f} s — {}\n", t->device, t->driver, t->seconds, path);
    for (const auto& [name, params] : t->kernels) {
      fmt::print("  {:<12}", name);
      for (const auto& [k, v] : params) fmt::print(" {}={}", k, v);
      fmt::print("\n");
    }
    return 0;
  }

  if (args.has("--check")) {
    std::string why;
    const auto tuning = load_tuning(args.get("--check"), &why);
    if (!tuning) throw UsageError("--check: " + why);
    const std::string refused = contained_tuning_mismatch(device, *tuning);
    if (!refused.empty()) throw Error(refused + " — do not store these parameters");
    fmt::print("exact on {} (driver {}): {}\n", device.name, device.driver_version,
               describe_parameters(*tuning));
    return 0;
  }
  return tune_here(device, path, options, models, batch);
}

}  // namespace anycl::cli
