// `anycl eval` and `anycl predict`: a saved model on a data set's test split (loss, accuracy,
// per-class accuracy, confusion matrix) or on an IDX image file (predicted classes).
#include <fmt/format.h>

#include "anycl/data/dataset.hpp"
#include "anycl/data/idx.hpp"
#include "anycl/error.hpp"
#include "anycl/train/evaluator.hpp"
#include "anycl/train/model_file.hpp"
#include "anycl/train/prediction.hpp"
#include "args.hpp"
#include "commands.hpp"
#include "device_flag.hpp"

namespace anycl::cli {
namespace {

constexpr size_t kBatch = 256;

void print_confusion(const ClassReport& report) {
  const size_t classes = report.classes;
  fmt::print("\nper-class accuracy:\n");
  for (size_t c = 0; c < classes; ++c)
    fmt::print("  class {:>3}: {:.4f}  ({} samples)\n", c, report.accuracy(c), report.totals[c]);
  fmt::print("\nconfusion matrix (rows: true class, columns: predicted):\n      ");
  for (size_t c = 0; c < classes; ++c) fmt::print("{:>6}", c);
  fmt::print("\n");
  for (size_t r = 0; r < classes; ++r) {
    fmt::print("{:>6}", r);
    for (size_t c = 0; c < classes; ++c) fmt::print("{:>6}", report.confusion[r * classes + c]);
    fmt::print("\n");
  }
}

std::string required(const Args& args, const char* flag) {
  const std::string v = args.get(flag);
  if (v.empty()) throw UsageError(fmt::format("{} FILE is required", flag));
  return v;
}

}  // namespace

int run_eval(int argc, char** argv) {
  const Args args(argc, argv, 2, {"--model", "--data", "--device"}, {"--help"});
  if (args.has("--help"))
    return fmt::print(
               "usage: anycl eval --model FILE [--data DIR] [--device SPEC]\n"
               "  Test loss and accuracy, per-class accuracy and the confusion matrix of a saved model\n"
               "  on the test split of DIR (default: Fashion-MNIST).\n"),
           0;
  if (!args.positional().empty()) throw UsageError("unexpected argument '" + args.positional().front() + "'");
  const std::string model_path = required(args, "--model");
  const DeviceInfo device = select_device_or_usage_error(args);
  const SavedModel saved = read_model(model_path);
  if (saved.spec.loss == "binary_crossentropy")
    throw ValidationError(fmt::format(
        "'{}' is a binary cross-entropy model (0/1 float targets, one per output), and `anycl eval` scores "
        "class labels — use `anycl predict` for its probabilities, or evaluate it on float targets through "
        "the library (C, C++ or Python evaluate)",
        model_path));
  if (saved.spec.loss != "softmax_cross_entropy")
    throw ValidationError(fmt::format(
        "'{}' is a regression model ({} loss), and `anycl eval` scores class labels — use `anycl predict` "
        "for its outputs, or evaluate it on float targets through the library (C, C++ or Python evaluate)",
        model_path, saved.spec.loss));
  data::LoadOptions load;
  load.num_classes = saved.num_classes;
  load.test_only = true;  // evaluation reads the test split only
  const data::DataSplits splits = data::load_folder(args.get("--data"), load);
  RuntimeOptions options;
  options.device_spec = std::to_string(device.index);
  Runtime rt(options);
  auto model = instantiate(saved, rt, kBatch);
  const DeviceDataset test(rt, splits.test);
  Evaluator evaluator(*model, kBatch);
  const EvalStats stats = evaluator.evaluate(test);
  fmt::print("model: {}  data: {} ({} test samples)  device: {}\n", model_path, splits.dir, test.count(),
             rt.info().name);
  fmt::print("Test loss: {:.4f} - Test accuracy: {:.4f}\n", stats.loss, stats.accuracy);
  const auto predicted =
      predicted_classes(evaluator.probabilities(test, 0, test.count()), model->output_features());
  print_confusion(class_report(test.host_labels(), predicted, saved.num_classes));
  return 0;
}

int run_predict(int argc, char** argv) {
  const Args args(argc, argv, 2, {"--model", "--images", "--first", "--device"}, {"--help"});
  if (args.has("--help"))
    return fmt::print(
               "usage: anycl predict --model FILE --images IDX3_FILE [--first N] [--device SPEC]\n"
               "  Prints the predicted class and its probability for each image (default: the first 10);\n"
               "  for a regression model (loss mse, mae, huber), its outputs, and for binary_crossentropy "
               "each\n"
               "  output's probability (shortest decimals that read back exactly).\n"),
           0;
  if (!args.positional().empty()) throw UsageError("unexpected argument '" + args.positional().front() + "'");
  const std::string model_path = required(args, "--model"), images_path = required(args, "--images");
  const size_t first_n = size_t(args.get_int("--first", 10, 1, 1ll << 40));
  const DeviceInfo device = select_device_or_usage_error(args);
  const SavedModel saved = read_model(model_path);
  const data::IdxArray idx = data::read_idx(images_path);
  if (idx.dims.size() != 3)
    throw DataError(
        fmt::format("'{}' holds {} dimensions; predict needs an images file (idx3: count, rows, cols)",
                    images_path, idx.dims.size()));
  data::Dataset images;
  images.count = std::min<size_t>(idx.dims[0], first_n);
  images.rows = idx.dims[1];
  images.cols = idx.dims[2];
  images.pixels.assign(idx.data.begin(), idx.data.begin() + long(images.count * images.features()));
  RuntimeOptions options;
  options.device_spec = std::to_string(device.index);
  Runtime rt(options);
  auto model = instantiate(saved, rt, kBatch);
  if (images.features() != model->input_features())
    throw ValidationError(fmt::format(
        "the model takes {} input features but the data has {} — use data of the shape the model was "
        "trained on",
        model->input_features(), images.features()));
  const std::vector<float> x = images.normalized(0, images.count);  // v/255, as training gathered them
  const size_t classes = model->output_features();
  if (saved.spec.loss != "softmax_cross_entropy") {  // a regression model: its outputs, exactly
    // binary_crossentropy: each output's probability (its sigmoid), as predict() gives it
    const bool sigmoid = saved.spec.loss == "binary_crossentropy";
    const std::vector<float> outputs = sigmoid ? predict(*model, x) : predict_outputs(*model, x);
    fmt::print("image");
    for (size_t c = 0; c < classes; ++c) fmt::print(sigmoid ? ",probability_{}" : ",output_{}", c);
    fmt::print("\n");
    for (size_t i = 0; i < images.count; ++i)
      fmt::print(
          "{},{}\n", i,
          fmt::join(outputs.begin() + long(i * classes), outputs.begin() + long((i + 1) * classes), ","));
    return 0;
  }
  const std::vector<float> probs = predict(*model, x);
  const auto predicted = predicted_classes(probs, classes);
  fmt::print("image,class,probability\n");
  for (size_t i = 0; i < predicted.size(); ++i)
    fmt::print("{},{},{:.6f}\n", i, predicted[i], probs[i * classes + predicted[i]]);
  return 0;
}

}  // namespace anycl::cli
