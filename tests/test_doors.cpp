// Every model kind through every door (issue 43): one list of kinds, one of doors, and each cell —
// save → load → predict bit-equal, evaluate (accuracy or MSE and MAE), validation during training,
// checkpoint and resume — either checked or refused for a stated reason. Every door trains under a
// cosine schedule whose warm-up runs past the first epoch, so a resume restores the schedule's place. A new
// kind or door added to a list gets every cell. The Python door's row is python/tests/test_doors.py (same
// kinds).
#include <anycl/anycl.h>
#include <doctest/doctest.h>
#include <anycl/error.hpp>
#include <anycl/nn/model_from_flags.hpp>
#include <anycl/optim/schedule.hpp>
#include <anycl/train/checkpoint.hpp>
#include <anycl/train/evaluator.hpp>
#include <anycl/train/model_file.hpp>
#include <anycl/train/prediction.hpp>
#include <anycl/train/trainer.hpp>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "data_files.hpp"
#include "helpers.hpp"

namespace {

using anycl::test::contains_all;

// A model kind: the --layers text over an input shape, its loss and its outputs.
struct Kind {
  const char* name;
  const char* layers;
  size_t channels, height, width;  // height = width = 0: flat features
  const char* loss;
  size_t outputs_;
  size_t outputs() const { return outputs_; }
  size_t features() const { return height ? channels * height * width : channels; }
  bool classes() const { return std::strcmp(loss, "softmax_cross_entropy") == 0; }  // class-label targets
  bool binary() const { return std::strcmp(loss, "binary_crossentropy") == 0; }     // 0/1 float targets
  bool regression() const { return !classes() && !binary(); }                       // metric: the MAE
};

const std::vector<Kind>& kinds() {
  static const std::vector<Kind> list = {
      {"dense classifier", "16", 8, 0, 0, "softmax_cross_entropy", 3},
      {"dense regressor", "16", 8, 0, 0, "mse", 2},
      {"conv classifier", "conv4x3,pool2,flatten,8", 1, 8, 8, "softmax_cross_entropy", 3},
      {"conv regressor", "conv4x3,pool2,flatten,8", 1, 8, 8, "mse", 2},
      // The second convolution's patch (4·3·3 = 36) runs Winograd's forward pass on a CPU
      {"conv regressor (Winograd on a CPU)", "conv4x3,conv4x3,pool2,flatten,8", 1, 8, 8, "mse", 2},
      {"dense binary classifier (sigmoid)", "16", 8, 0, 0, "binary_crossentropy", 1},
      {"dense multi-label classifier", "16", 8, 0, 0, "binary_crossentropy", 3},
      {"conv binary classifier (sigmoid)", "conv4x3,pool2,flatten,8", 1, 8, 8, "binary_crossentropy", 1},
      {"dense mae regressor", "16", 8, 0, 0, "mae", 2},
      {"dense huber regressor", "16", 8, 0, 0, "huber", 2},
      {"conv classifier (average and global pooling)", "conv4x3,avgpool2,conv4x3same,globalavgpool,8", 1, 8,
       8, "softmax_cross_entropy", 3},
      {"conv binary classifier (global max pooling)", "conv4x3,globalmaxpool", 1, 8, 8, "binary_crossentropy",
       1},
      {"conv classifier (Conv2D, BatchNormalization, ReLU)", "conv4x3:linear,bn0.9:relu,pool2,flatten,8", 1,
       8, 8, "softmax_cross_entropy", 3},
  };
  return list;
}

// Samples whose class / targets are a smooth function of the features, so a few steps learn.
struct Data {
  std::vector<float> x, targets;
  std::vector<int32_t> labels;
  size_t count = 0;
};

Data make_data(const Kind& k, size_t count, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  Data d;
  d.count = count;
  const size_t f = k.features();
  d.x.resize(count * f);
  for (float& v : d.x) v = u(gen);
  for (size_t i = 0; i < count; ++i) {
    float s = 0;
    for (size_t j = 0; j < f; ++j) s += d.x[i * f + j] * float(j % 3 == 0 ? 1 : -1);
    if (k.regression()) {
      d.targets.push_back(std::tanh(s));
      d.targets.push_back(0.5f * s);
    } else if (k.binary()) {  // each output its own class: the sign of s, then of two more sums
      for (size_t o = 0; o < k.outputs(); ++o)
        d.targets.push_back((o == 0   ? s
                             : o == 1 ? d.x[i * f] - d.x[i * f + 1]
                                      : d.x[i * f + 2]) > 0
                                ? 1.f
                                : 0.f);
    } else {
      d.labels.push_back(s < -0.5f ? 0 : s < 0.5f ? 1 : 2);
    }
  }
  return d;
}

anycl::data::Dataset host_set(const Kind& k, const Data& d) {
  return !k.classes() ? anycl::data::Dataset::from_targets(d.x, d.targets, k.features(), k.outputs())
                      : anycl::data::Dataset::from_features(d.x, d.labels, k.features(), k.outputs());
}

anycl::ModelSpec spec_of(const Kind& k) {
  anycl::ModelFlags flags;
  flags.layers = k.layers;
  flags.dropout = 0;
  anycl::ModelSpec spec =
      k.height ? anycl::model_from_flags(flags, anycl::Shape{k.channels, k.height, k.width}, k.outputs())
               : anycl::model_from_flags(flags, k.features(), k.outputs());
  spec.loss = k.loss;
  return spec;
}

bool same_bits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && !a.empty() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

// What a door did for one kind; an empty `skipped_*` means the cell was checked.
struct Cells {
  std::string not_in_door;  // non-empty: this kind cannot pass this door at all, and why
  bool predict_bit_equal = false;
  double eval_loss = NAN, eval_metric = NAN;  // accuracy (binary accuracy for a sigmoid one), or MAE
  double val_loss = NAN;                      // from training's validation
  bool resumed = false;                       // checkpoint written and resumed
  std::string resume_not_in_door;             // non-empty: the door has no resume, and why
  std::string eval_not_in_door;               // non-empty: the door cannot evaluate this kind (nor validate)
};

constexpr size_t kTrain = 240, kTest = 60, kBatch = 32;
// Keras' CosineDecay(0, decay_steps=8, alpha=0.1, warmup_target=0.002, warmup_steps=10): 6–8 steps an
// epoch here, so the checkpoint after epoch 1 falls inside the warm-up.
constexpr const char* kSchedule = "cosine:decay_steps=8,alpha=0.1,warmup_target=0.002,warmup_steps=10";

// --- C++: Trainer, save_model / read_model, Predictor, Evaluator, Trainer::resume_from ----------
Cells cpp_door(const Kind& k, anycl::test::TempDir& dir) {
  Cells c;
  auto& rt = anycl::test::runtime();
  const Data train = make_data(k, kTrain, 1), test = make_data(k, kTest, 2);
  const auto train_set = host_set(k, train), test_set = host_set(k, test);
  anycl::TrainOptions options;
  options.epochs = 2;
  options.batch = kBatch;
  options.checkpoint_path = dir.file("cpp.anyclckpt");
  options.schedule = anycl::parse_schedule(kSchedule);
  anycl::Trainer whole({&rt}, spec_of(k), {"adam"}, options);
  const auto history = whole.fit(train_set, &test_set, "val");
  REQUIRE(history.size() == 2);
  c.val_loss = history.back().eval.loss;
  if (k.regression()) {  // the validation metric is the MAE, as training's accuracy field holds it
    CHECK(history.back().eval.mae > 0);
    CHECK(history.back().eval.accuracy == history.back().eval.mae);
  }

  anycl::save_model(dir.file("cpp.anycl"), whole.model(), k.classes() ? k.outputs() : 0);
  const anycl::SavedModel saved = anycl::read_model(dir.file("cpp.anycl"));
  auto loaded = anycl::instantiate(saved, rt, kBatch);
  std::vector<float> a(kTest * k.outputs()), b(a.size());
  anycl::Predictor(whole.model()).run(test.x.data(), kTest, a.data());
  anycl::Predictor(*loaded).run(test.x.data(), kTest, b.data());
  c.predict_bit_equal = same_bits(a, b);

  const anycl::DeviceDataset device_test(rt, test_set);
  const anycl::EvalStats s = anycl::Evaluator(*loaded, kBatch).evaluate(device_test);
  c.eval_loss = s.loss;
  c.eval_metric = k.regression() ? s.mae : s.accuracy;
  if (!k.regression()) CHECK(s.mae == 0);

  // Resume: one epoch, then a fresh Trainer from its checkpoint to epoch 2 equals the whole run.
  options.epochs = 1;
  options.checkpoint_path = dir.file("half.anyclckpt");
  anycl::Trainer first({&rt}, spec_of(k), {"adam"}, options);
  first.fit(train_set, &test_set, "val");
  options.epochs = 2;
  anycl::Trainer second({&rt}, spec_of(k), {"adam"}, options);
  second.resume_from(options.checkpoint_path);
  second.fit(train_set, &test_set, "val");
  c.resumed = same_bits(second.model().parameters().download(), whole.model().parameters().download());
  return c;
}

// --- C: anycl.h from model options to file and back ---------------------------------------------
void c_ok(anycl_status status, const char* call) {
  INFO(call << ": " << anycl_status_name(status) << " " << anycl_last_error());
  REQUIRE(status == ANYCL_OK);
}

anycl_dataset* c_dataset(const Kind& k, const Data& d) {
  anycl_dataset* out = nullptr;
  if (!k.classes())
    c_ok(anycl_dataset_create_targets(d.x.data(), d.count, k.features(), d.targets.data(), k.outputs(), &out),
         "anycl_dataset_create_targets");
  else
    c_ok(anycl_dataset_create_classes(d.x.data(), d.count, k.features(), d.labels.data(), k.outputs(), &out),
         "anycl_dataset_create_classes");
  return out;
}

Cells c_door(const Kind& k, anycl::test::TempDir& dir) {
  Cells c;
  anycl_runtime* rt = nullptr;
  c_ok(anycl_runtime_create(nullptr, &rt), "anycl_runtime_create");
  anycl_model_options mo;
  anycl_model_options_init(&mo);
  mo.layers = k.layers;
  mo.dropout = 0;
  mo.loss = k.loss;
  mo.input_shape[0] = k.channels;
  mo.input_shape[1] = k.height;
  mo.input_shape[2] = k.width;
  mo.outputs = k.outputs();
  auto create = [&mo] {
    anycl_model* m = nullptr;
    c_ok(anycl_model_create(&mo, &m), "anycl_model_create");
    return m;
  };
  anycl_model* model = create();
  const Data train = make_data(k, kTrain, 1), test = make_data(k, kTest, 2);
  anycl_dataset* train_set = c_dataset(k, train);
  anycl_dataset* test_set = c_dataset(k, test);
  anycl_train_options to;
  anycl_train_options_init(&to);
  to.epochs = 2;
  to.batch = kBatch;
  to.optimizer = "adam";
  to.lr_schedule = "cosine";  // kSchedule's
  to.decay_steps = 8;
  to.alpha = 0.1;
  to.warmup_target = 0.002;
  to.warmup_steps = 10;
  const std::string checkpoints = dir.file("c-checkpoints");
  to.checkpoint_dir = checkpoints.c_str();
  anycl_epoch history[2];
  size_t done = 0;
  c_ok(anycl_train(model, rt, train_set, test_set, &to, history, 2, &done, nullptr), "anycl_train");
  REQUIRE(done == 2);
  if (history[1].has_validation) c.val_loss = history[1].val_loss;
  if (k.regression()) CHECK(history[1].val_accuracy > 0);  // the validation MAE
  CHECK(anycl::read_checkpoint(checkpoints + "/checkpoint.anyclckpt").epoch == 2);

  const std::string path = dir.file("c.anycl");
  c_ok(anycl_model_save(model, path.c_str()), "anycl_model_save");
  anycl_model* loaded = nullptr;
  c_ok(anycl_model_load(path.c_str(), &loaded), "anycl_model_load");
  std::vector<float> a(kTest * k.outputs()), b(a.size());
  c_ok(anycl_predict(model, rt, test.x.data(), kTest, a.data(), a.size()), "anycl_predict");
  c_ok(anycl_predict(loaded, rt, test.x.data(), kTest, b.data(), b.size()), "anycl_predict");
  c.predict_bit_equal = same_bits(a, b);
  c_ok(anycl_evaluate_metric(loaded, rt, test_set, &c.eval_loss, &c.eval_metric), "anycl_evaluate_metric");
  double before_loss = 0, before_metric = 0;
  c_ok(anycl_evaluate_metric(model, rt, test_set, &before_loss, &before_metric), "anycl_evaluate_metric");
  CHECK(before_loss == c.eval_loss);
  CHECK(before_metric == c.eval_metric);

  // Resume (options.resume_from): one epoch into a checkpoint folder, then a new model continued from
  // that folder to epoch 2 predicts as the whole run's model does, bit for bit.
  const std::string half_dir = dir.file("c-half");
  to.checkpoint_dir = half_dir.c_str();
  to.epochs = 1;
  anycl_model* half = create();
  c_ok(anycl_train(half, rt, train_set, test_set, &to, nullptr, 0, nullptr, nullptr), "anycl_train");
  anycl_model* resumed = create();
  to.epochs = 2;
  to.resume_from = half_dir.c_str();
  c_ok(anycl_train(resumed, rt, train_set, test_set, &to, history, 2, &done, nullptr), "anycl_train");
  CHECK(done == 2);  // the checkpoint's epoch and the one trained
  std::vector<float> r(a.size());
  c_ok(anycl_predict(resumed, rt, test.x.data(), kTest, r.data(), r.size()), "anycl_predict");
  c.resumed = same_bits(a, r);
  anycl_model_destroy(resumed);
  anycl_model_destroy(half);
  anycl_model_destroy(loaded);
  anycl_dataset_destroy(test_set);
  anycl_dataset_destroy(train_set);
  anycl_model_destroy(model);
  anycl_runtime_destroy(rt);
  return c;
}

// --- CLI: anycl train / eval / --resume over an MNIST-format folder (class labels only) ----------
std::vector<float> parse_floats(const std::string& line) {
  std::vector<float> out;
  size_t at = line.find(',');
  while (at != std::string::npos) {
    out.push_back(std::strtof(line.c_str() + at + 1, nullptr));
    at = line.find(',', at + 1);
  }
  return out;
}

// `anycl train` reads MNIST-format folders (class labels), so a model on float targets (a regressor,
// a sigmoid one) enters the CLI as a model file: `anycl predict` prints its outputs (a sigmoid
// model's probabilities) exactly; `anycl eval` refuses it in words.
Cells cli_regressor(const Kind& k, anycl::test::TempDir& dir) {
  Cells c;
  c.resume_not_in_door = "`anycl train` trains classifiers only (MNIST-format folders: class labels)";
  auto& rt = anycl::test::runtime();
  const Data train = make_data(k, kTrain, 1);
  anycl::TrainOptions options;
  options.epochs = 1;
  options.batch = kBatch;
  options.schedule = anycl::parse_schedule(kSchedule);
  anycl::Trainer trainer({&rt}, spec_of(k), {"adam"}, options);
  trainer.fit(host_set(k, train), nullptr, "val");
  anycl::save_model(dir.file("reg.anycl"), trainer.model(), 0);
  const size_t rows = k.height ? k.height : 4, cols = k.height ? k.width : 2, n = 5;
  const std::vector<uint8_t> pixels = anycl::test::random_bytes(n * rows * cols, 7);
  anycl::test::write_file(dir.file("images"),
                          anycl::test::idx_bytes({uint32_t(n), uint32_t(rows), uint32_t(cols)}, pixels));
  const auto predicted =
      anycl::test::run_command(anycl::test::anycl_cli() + " predict --model " + dir.file("reg.anycl") +
                               " --images " + dir.file("images") + " 2>&1");
  INFO(predicted.output);
  REQUIRE(predicted.exit_code == 0);
  std::vector<float> x(pixels.size()), want(n * k.outputs()), got;
  for (size_t i = 0; i < x.size(); ++i) x[i] = float(pixels[i]) / 255.f;
  auto loaded = anycl::instantiate(anycl::read_model(dir.file("reg.anycl")), rt, kBatch);
  anycl::Predictor(*loaded).run(x.data(), n, want.data());
  std::istringstream lines(predicted.output);
  std::string line;
  std::getline(lines, line);
  std::string header = "image";
  for (size_t o = 0; o < k.outputs(); ++o)
    header += (k.binary() ? ",probability_" : ",output_") + std::to_string(o);
  CHECK(line == header);
  while (std::getline(lines, line)) {
    const auto row = parse_floats(line);
    got.insert(got.end(), row.begin(), row.end());
  }
  c.predict_bit_equal = same_bits(got, want);
  const auto eval =
      anycl::test::run_command(anycl::test::anycl_cli() + " eval --model " + dir.file("reg.anycl") +
                               " --data " + dir.file("nowhere") + " 2>&1");
  CHECK(eval.exit_code != 0);
  CHECK_MESSAGE(contains_all(eval.output, {k.binary() ? "binary cross-entropy model" : "regression model",
                                           "anycl predict", "float targets"}),
                eval.output);
  c.eval_not_in_door =
      "`anycl eval` scores class labels: it refuses a model on float targets (regression or "
      "binary cross-entropy), naming `anycl predict`";
  return c;
}

Cells cli_door(const Kind& k, anycl::test::TempDir& dir) {
  Cells c;
  if (!k.classes()) return cli_regressor(k, dir);
  anycl::test::TinySpec tiny;
  tiny.train = kTrain;
  tiny.test = kTest;
  tiny.rows = tiny.cols = k.height ? k.height : 4;
  tiny.classes = k.outputs();
  if (!k.height) tiny.cols = 2;  // 4 × 2 = the dense kinds' 8 features
  const std::string data = dir.file("idx");
  std::filesystem::create_directories(data);
  anycl::test::write_mnist_folder(data, tiny);
  const std::string cli = anycl::test::anycl_cli();
  const std::string common = " --data " + data + " --layers " + k.layers +
                             " --dropout 0 --optimizer adam --batch 32 --no-autotune --quiet --lr-schedule " +
                             kSchedule;
  const auto whole =
      anycl::test::run_command(cli + " train --epochs 2 --validation-split 0.25" + common + " --save " +
                               dir.file("cli.anycl") + " --metrics " + dir.file("cli.csv") + " 2>&1");
  INFO(whole.output);
  REQUIRE(whole.exit_code == 0);
  const std::string metrics = anycl::test::slurp(dir.file("cli.csv"));
  if (metrics.find("val_loss") != std::string::npos) c.val_loss = 1;  // the column is there

  // The saved file loads in the library and scores as `anycl eval` prints it.
  const auto eval =
      anycl::test::run_command(cli + " eval --model " + dir.file("cli.anycl") + " --data " + data + " 2>&1");
  INFO(eval.output);
  REQUIRE(eval.exit_code == 0);
  auto& rt = anycl::test::runtime();
  const anycl::SavedModel saved = anycl::read_model(dir.file("cli.anycl"));
  auto loaded = anycl::instantiate(saved, rt, kBatch);
  anycl::data::LoadOptions load;
  load.num_classes = saved.num_classes;
  load.test_only = true;
  const anycl::DeviceDataset test(rt, anycl::data::load_folder(data, load).test);
  const anycl::EvalStats s = anycl::Evaluator(*loaded, kBatch).evaluate(test);
  c.eval_loss = s.loss;
  c.eval_metric = s.accuracy;
  c.predict_bit_equal = eval.output.find(fmt::format("Test loss: {:.4f} - Test accuracy: {:.4f}", s.loss,
                                                     s.accuracy)) != std::string::npos;

  // --resume: one epoch with a checkpoint, then resumed to two, saves the whole run's weights.
  const std::string ck = dir.file("cli-ck");
  const auto half = anycl::test::run_command(cli + " train --epochs 1 --validation-split 0.25" + common +
                                             " --checkpoint " + ck + " 2>&1");
  INFO(half.output);
  REQUIRE(half.exit_code == 0);
  const auto rest = anycl::test::run_command(cli + " train --resume " + ck + " --epochs 2 --quiet --save " +
                                             dir.file("resumed.anycl") + " 2>&1");
  INFO(rest.output);
  REQUIRE(rest.exit_code == 0);
  c.resumed = same_bits(anycl::read_model(dir.file("resumed.anycl")).parameters, saved.parameters);
  return c;
}

struct Door {
  const char* name;
  std::function<Cells(const Kind&, anycl::test::TempDir&)> run;
};

const std::vector<Door>& doors() {
  static const std::vector<Door> list = {{"C++", cpp_door}, {"C API", c_door}, {"CLI", cli_door}};
  return list;
}

}  // namespace

TEST_CASE(
    "every model kind round-trips through every door: save, load, predict, evaluate, validate, resume") {
  for (const Door& door : doors()) {
    for (const Kind& kind : kinds()) {
      const std::string cell = std::string(door.name) + " × " + kind.name;
      CAPTURE(cell);
      anycl::test::TempDir dir;
      const Cells c = door.run(kind, dir);
      if (!c.not_in_door.empty()) {
        MESSAGE(cell << ": not in this door — " << c.not_in_door);
        continue;
      }
      CHECK(c.predict_bit_equal);
      if (!c.eval_not_in_door.empty()) {
        MESSAGE(cell << ": evaluate not in this door — " << c.eval_not_in_door);
      } else {
        CHECK(std::isfinite(c.eval_loss));
        CHECK(c.eval_loss >= 0);
        if (kind.regression())
          CHECK(c.eval_metric > 0);  // the MAE of an imperfect fit
        else
          CHECK((c.eval_metric >= 0 && c.eval_metric <= 1));
        CHECK(std::isfinite(c.val_loss));  // validation reported during training (val_loss)
      }
      if (c.resume_not_in_door.empty())
        CHECK(c.resumed);
      else
        MESSAGE(cell << ": resume not in this door — " << c.resume_not_in_door);
    }
  }
}

TEST_CASE("a regression model file written before regressors recorded outputs ('classes 0') still loads") {
  // The architecture as anycl wrote it for an MSE model before this release: version 2, classes 0.
  anycl::ModelSpec spec = spec_of(kinds()[1]);
  const size_t n = anycl::Sequential(spec).parameter_count();
  std::vector<float> params(n, 0.25f);
  std::string text;  // as earlier releases wrote a regressor: its outputs as "classes 0"
  for (const anycl::LayerSpec& l : spec.layers) text += l.text() + "\n";
  text = "input 8\nclasses 0\nloss mse\n" + text;
  std::vector<unsigned char> old = {'A', 'N', 'Y', 'C', 'L', 'M', 'D', 'L'};
  const auto put = [&](uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) old.push_back((unsigned char)(v >> (8 * i)));
  };
  put(2, 4);  // format version 2: a loss line
  put(text.size(), 4);
  for (char ch : text) old.push_back((unsigned char)ch);
  put(params.size(), 8);
  for (float f : params) {
    uint32_t bits;
    std::memcpy(&bits, &f, 4);
    put(bits, 4);
  }
  uint64_t h = 1469598103934665603ull;  // the format's FNV-1a basis (docs/model-format.md)
  for (unsigned char byte : old) h = (h ^ byte) * 1099511628211ull;
  put(h, 8);
  const anycl::SavedModel saved = anycl::decode_model("old-regressor.anycl", old);
  CHECK(saved.num_classes == 2);  // its outputs
  CHECK(saved.spec.loss == "mse");
  CHECK(saved.parameters == params);
  // And a regressor saved now writes its outputs, so the file reads back as it was written.
  const auto now = anycl::decode_model("now.anycl", anycl::encode_model(spec, 0, params));
  CHECK(now.num_classes == 2);

  // A classifier with "classes 0" is still refused, in words.
  anycl::ModelSpec classifier = spec_of(kinds()[0]);
  const auto bad = anycl::encode_model(
      classifier, 0, std::vector<float>(anycl::Sequential(classifier).parameter_count(), 0.f));
  const std::string message =
      anycl::test::thrown_message<anycl::DataError>([&] { anycl::decode_model("bad.anycl", bad); });
  CHECK_MESSAGE(contains_all(message, {"bad.anycl", "classes 0", "at least 2 classes"}), message);
}
