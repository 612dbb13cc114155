// The C API's training callbacks see the model as it is (docs/guarantees.md, "Callbacks"): in
// on_epoch, anycl_model_save, anycl_predict and anycl_evaluate see the weights of that epoch's end;
// a nested anycl_train of the same model is refused; a failed anycl_train leaves the weights as they
// were. Exit code 77: skipped (no device).
#include <anycl/anycl.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

namespace {

constexpr size_t kSamples = 256;
int failures = 0;

void expect(bool ok, int line, const std::string& what) {
  if (ok) return;
  std::fprintf(stderr, "c_api_callbacks_test.cpp:%d: %s (last error: %s)\n", line, what.c_str(),
               anycl_last_error());
  ++failures;
}
#define EXPECT(cond) expect((cond), __LINE__, #cond)

struct Run {
  anycl_model* model = nullptr;
  anycl_runtime* rt = nullptr;
  anycl_dataset* data = nullptr;
  const float* x = nullptr;
  std::string folder;
  std::vector<std::vector<float>> predictions;  // at each epoch end
  std::vector<std::string> files;
  anycl_status nested = ANYCL_OK;
  std::string nested_message;
};

std::vector<float> predict(anycl_model* model, anycl_runtime* rt, const float* x) {
  std::vector<float> out(2 * 16);
  if (anycl_predict(model, rt, x, 16, out.data(), out.size()) != ANYCL_OK) out.clear();
  return out;
}

int at_epoch_end(const anycl_epoch* e, void* user) {
  Run& run = *static_cast<Run*>(user);
  run.files.push_back(run.folder + "/epoch" + std::to_string(e->epoch) + ".anycl");
  if (anycl_model_save(run.model, run.files.back().c_str()) != ANYCL_OK) run.files.back().clear();
  run.predictions.push_back(predict(run.model, run.rt, run.x));
  double loss = 0, accuracy = 0;
  if (anycl_evaluate(run.model, run.rt, run.data, &loss, &accuracy) != ANYCL_OK)
    run.predictions.back().clear();
  anycl_train_options to;
  anycl_train_options_init(&to);
  to.epochs = 1;
  run.nested = anycl_train(run.model, run.rt, run.data, nullptr, &to, nullptr, 0, nullptr, nullptr);
  run.nested_message = anycl_last_error();
  return 0;
}

int block_the_checkpoint(const anycl_epoch*, void* user) {
  std::filesystem::create_directories(*static_cast<std::string*>(user) + "/checkpoint.anyclckpt");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string folder = argc > 1 ? argv[1] : ".";
  anycl_runtime* rt = nullptr;
  if (anycl_runtime_create("", &rt) != ANYCL_OK) {
    const char* ci = std::getenv("CI");
    std::fprintf(stderr, "[anycl test skipped] no OpenCL device: %s\n", anycl_last_error());
    return ci && std::strcmp(ci, "true") == 0 ? 1 : 77;
  }
  std::vector<float> x(2 * kSamples);
  std::vector<int32_t> y(kSamples);
  for (size_t i = 0; i < kSamples; ++i) {
    const float a = float(i % 23) / 11.f - 1.f, b = float((i * 7) % 29) / 14.f - 1.f;
    x[2 * i] = a, x[2 * i + 1] = b, y[i] = a * a + b * b < 0.36f ? 1 : 0;
  }
  anycl_dataset* data = nullptr;
  anycl_model_options mo;
  anycl_model_options_init(&mo);
  mo.layers = "16";
  mo.dropout = 0.f;
  mo.input_shape[0] = 2;
  mo.outputs = 2;
  anycl_model* model = nullptr;
  if (anycl_dataset_create_classes(x.data(), kSamples, 2, y.data(), 2, &data) != ANYCL_OK ||
      anycl_model_create(&mo, &model) != ANYCL_OK) {
    std::fprintf(stderr, "set-up: %s\n", anycl_last_error());
    return 1;
  }

  // A first training (the model has no weights before it: the callback's calls still work).
  Run run{model, rt, data, x.data(), folder, {}, {}, ANYCL_OK, ""};
  anycl_train_options to;
  anycl_train_options_init(&to);
  to.epochs = 3;
  to.batch = 32;
  to.optimizer = "adam";
  to.lr = 0.01f;
  to.on_epoch = at_epoch_end;
  to.user = &run;
  EXPECT(anycl_train(model, rt, data, nullptr, &to, nullptr, 0, nullptr, nullptr) == ANYCL_OK);
  EXPECT(run.predictions.size() == 3 && run.files.size() == 3);
  EXPECT(run.nested == ANYCL_ERROR_INVALID_ARGUMENT &&
         run.nested_message.find("already training") != std::string::npos);
  for (size_t i = 0; i < run.files.size() && i < run.predictions.size(); ++i) {
    EXPECT(!run.predictions[i].empty() && !run.files[i].empty());
    anycl_model* saved = nullptr;
    EXPECT(anycl_model_load(run.files[i].c_str(), &saved) == ANYCL_OK);
    if (saved)
      EXPECT(predict(saved, rt, x.data()) == run.predictions[i]);  // the file holds that epoch's weights
    anycl_model_destroy(saved);
  }
  EXPECT(run.predictions.size() == 3 && run.predictions[0] != run.predictions[2]);
  const std::vector<float> trained = predict(model, rt, x.data());
  EXPECT(!run.predictions.empty() && trained == run.predictions.back());

  // A training that fails after an epoch end (its checkpoint cannot be written: the callback put a
  // folder where the file goes) leaves the weights as they were before the call.
  const std::string checkpoints = folder + "/callbacks-checkpoints";
  std::filesystem::remove_all(checkpoints);
  anycl_train_options failing = to;
  failing.checkpoint_dir = checkpoints.c_str();
  failing.on_epoch = block_the_checkpoint;
  failing.user = const_cast<std::string*>(&checkpoints);
  EXPECT(anycl_train(model, rt, data, nullptr, &failing, nullptr, 0, nullptr, nullptr) != ANYCL_OK);
  EXPECT(predict(model, rt, x.data()) == trained);

  anycl_model_destroy(model);
  anycl_dataset_destroy(data);
  anycl_runtime_destroy(rt);
  std::fprintf(stderr, "c_api_callbacks_test: %d failure(s)\n", failures);
  return failures == 0 ? 0 : 1;
}
