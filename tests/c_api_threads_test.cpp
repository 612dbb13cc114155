// The C API under threads, as an application uses it (docs/guarantees.md, "Threads"): the first
// OpenCL use from several threads at once, threads predicting with one model, threads each with
// its own model on one runtime, and training in the background beside predictions — every result
// bit-equal to the same calls made one after another. Its own process (first use must be first),
// with a watchdog so that a deadlock fails instead of hanging. Exit code 77: skipped (no device).
#include <anycl/anycl.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr size_t kThreads = 4;
constexpr size_t kSamples = 512;
constexpr int kWatchdogSeconds = 420;
int failures = 0;  // main thread only: workers report through their own results

void fail(int line, const std::string& what) {
  std::fprintf(stderr, "c_api_threads_test.cpp:%d: %s\n", line, what.c_str());
  ++failures;
}
#define EXPECT(cond, what)             \
  do {                                 \
    if (!(cond)) fail(__LINE__, what); \
  } while (0)

// Releases every waiting thread at once, so that their calls overlap.
class StartLine {
 public:
  void wait() {
    std::unique_lock<std::mutex> lock(m_);
    cv_.wait(lock, [&] { return open_; });
  }
  void open() {
    {
      std::lock_guard<std::mutex> lock(m_);
      open_ = true;
    }
    cv_.notify_all();
  }

 private:
  std::mutex m_;
  std::condition_variable cv_;
  bool open_ = false;
};

// Two classes: inside or outside a circle of radius 0.6 (a deterministic grid), as c_api_test.c.
struct Data {
  std::vector<float> x = std::vector<float>(2 * kSamples);
  std::vector<int32_t> y = std::vector<int32_t>(kSamples);
  Data() {
    for (size_t i = 0; i < kSamples; ++i) {
      const float a = float(i % 23) / 11.f - 1.f, b = float((i * 7) % 29) / 14.f - 1.f;
      x[2 * i] = a, x[2 * i + 1] = b;
      y[i] = a * a + b * b < 0.36f ? 1 : 0;
    }
  }
};

anycl_model* new_model(const char* layers) {
  anycl_model_options mo;
  anycl_model_options_init(&mo);
  mo.layers = layers;
  mo.dropout = 0.f;
  mo.input_shape[0] = 2;
  mo.outputs = 2;
  anycl_model* model = nullptr;
  if (anycl_model_create(&mo, &model) != ANYCL_OK) fail(__LINE__, anycl_last_error());
  return model;
}

anycl_train_options options(size_t epochs, uint64_t seed) {
  anycl_train_options to;
  anycl_train_options_init(&to);
  to.epochs = epochs;
  to.batch = 32;
  to.optimizer = "adam";
  to.lr = 0.01f;
  to.seed = seed;
  return to;
}

// The losses of each epoch (empty on failure, the message in *error).
std::vector<double> train(anycl_model* model, anycl_runtime* rt, anycl_dataset* data, size_t epochs,
                          uint64_t seed, std::string* error) {
  const anycl_train_options to = options(epochs, seed);
  std::vector<anycl_epoch> history(epochs);
  size_t done = 0;
  if (anycl_train(model, rt, data, nullptr, &to, history.data(), history.size(), &done, nullptr) !=
      ANYCL_OK) {
    *error = anycl_last_error();
    return {};
  }
  std::vector<double> losses;
  for (size_t i = 0; i < done; ++i) losses.push_back(history[i].loss);
  return losses;
}

// Rows [first, first + count) of the data's predictions (empty on failure, the message in *error).
std::vector<float> predict(anycl_model* model, anycl_runtime* rt, const Data& d, size_t first, size_t count,
                           std::string* error) {
  std::vector<float> out(2 * count);
  if (anycl_predict(model, rt, d.x.data() + 2 * first, count, out.data(), out.size()) != ANYCL_OK) {
    *error = anycl_last_error();
    return {};
  }
  return out;
}

// The calls each thread makes: a mix of sizes (one row goes another way than a batch).
struct Call {
  size_t first, count;
};
const std::vector<Call> kCalls = {{0, 1}, {3, 7}, {10, 64}, {100, 300}, {5, 1}, {0, 512}, {200, 33}};

// Thread t's predictions of every call, `rounds` times over.
std::vector<std::vector<float>> predict_calls(anycl_model* model, anycl_runtime* rt, const Data& d,
                                              size_t rounds, std::string* error) {
  // First the largest call, so that every recorded call runs on the same device build of the model
  // (it is rebuilt for a larger batch), serially as in threads.
  (void)predict(model, rt, d, 0, kSamples, error);
  std::vector<std::vector<float>> results;
  for (size_t r = 0; r < rounds; ++r)
    for (const Call& c : kCalls) results.push_back(predict(model, rt, d, c.first, c.count, error));
  return results;
}

void first_use_from_threads() {
  StartLine start;
  std::vector<std::string> errors(kThreads);
  std::vector<anycl_runtime*> runtimes(kThreads, nullptr);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      start.wait();
      size_t length = 0;
      const anycl_status listed = anycl_devices_json(nullptr, 0, &length);
      if (listed != ANYCL_ERROR_BUFFER_TOO_SMALL || length == 0)
        errors[t] = std::string("devices: ") + anycl_last_error();
      if (anycl_runtime_create("", &runtimes[t]) != ANYCL_OK)
        errors[t] += std::string("runtime: ") + anycl_last_error();
    });
  start.open();
  for (auto& t : threads) t.join();
  for (size_t t = 0; t < kThreads; ++t) {
    EXPECT(errors[t].empty(), "first use from thread " + std::to_string(t) + ": " + errors[t]);
    anycl_runtime_destroy(runtimes[t]);
  }
}

void threads_share_one_model(anycl_runtime* rt, anycl_dataset* data, const Data& d) {
  anycl_model* model = new_model("32,32");
  std::string error;
  EXPECT(!train(model, rt, data, 5, 1, &error).empty(), error);
  const std::vector<std::vector<float>> serial = predict_calls(model, rt, d, 1, &error);
  EXPECT(error.empty(), error);

  StartLine start;
  std::vector<std::vector<std::vector<float>>> results(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      start.wait();
      results[t] = predict_calls(model, rt, d, 5, &errors[t]);
    });
  start.open();
  for (auto& t : threads) t.join();
  for (size_t t = 0; t < kThreads; ++t) {
    EXPECT(errors[t].empty(), errors[t]);
    for (size_t i = 0; i < results[t].size(); ++i)
      EXPECT(results[t][i] == serial[i % serial.size()], "one model, thread " + std::to_string(t) +
                                                             ", call " + std::to_string(i) +
                                                             ": not the serial result");
  }
  anycl_model_destroy(model);
}

// Evaluation (anycl_evaluate_metric, what Python's evaluate calls, and anycl_evaluate) from threads
// sharing one model, beside predictions of it: every figure equal to the serial call's.
void threads_evaluate_one_model(anycl_runtime* rt, anycl_dataset* data, const Data& d) {
  anycl_model* model = new_model("32,32");
  std::string error;
  EXPECT(!train(model, rt, data, 3, 2, &error).empty(), error);
  double loss = 0, metric = 0, plain_loss = 0, accuracy = 0;
  EXPECT(anycl_evaluate_metric(model, rt, data, &loss, &metric) == ANYCL_OK, anycl_last_error());
  EXPECT(anycl_evaluate(model, rt, data, &plain_loss, &accuracy) == ANYCL_OK, anycl_last_error());
  const std::vector<std::vector<float>> serial = predict_calls(model, rt, d, 1, &error);
  EXPECT(error.empty(), error);

  StartLine start;
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      start.wait();
      for (int round = 0; round < 5; ++round) {
        double l = 0, m = 0;
        if (t % 2 == 0) {
          if (anycl_evaluate_metric(model, rt, data, &l, &m) != ANYCL_OK) errors[t] = anycl_last_error();
          if (l != loss || m != metric) errors[t] = "anycl_evaluate_metric: not the serial figures";
        } else {
          if (anycl_evaluate(model, rt, data, &l, &m) != ANYCL_OK) errors[t] = anycl_last_error();
          if (l != plain_loss || m != accuracy) errors[t] = "anycl_evaluate: not the serial figures";
          const std::vector<std::vector<float>> got = predict_calls(model, rt, d, 1, &errors[t]);
          if (got != serial) errors[t] = "predictions beside evaluations: not the serial result";
        }
      }
    });
  start.open();
  for (auto& t : threads) t.join();
  for (size_t t = 0; t < kThreads; ++t)
    EXPECT(errors[t].empty(), "evaluate, thread " + std::to_string(t) + ": " + errors[t]);
  anycl_model_destroy(model);
}

void threads_with_own_models(anycl_runtime* rt, anycl_dataset* data, const Data& d) {
  std::vector<anycl_model*> models;
  std::vector<std::vector<std::vector<float>>> serial;
  std::string error;
  for (size_t t = 0; t < kThreads; ++t) {
    models.push_back(new_model(t % 2 ? "16" : "32,32"));
    EXPECT(!train(models[t], rt, data, 3, 10 + t, &error).empty(), error);
    serial.push_back(predict_calls(models[t], rt, d, 1, &error));
  }
  StartLine start;
  std::vector<std::vector<std::vector<float>>> results(kThreads);
  std::vector<std::string> errors(kThreads);
  std::vector<std::thread> threads;
  for (size_t t = 0; t < kThreads; ++t)
    threads.emplace_back([&, t] {
      start.wait();
      results[t] = predict_calls(models[t], rt, d, 5, &errors[t]);
    });
  start.open();
  for (auto& t : threads) t.join();
  for (size_t t = 0; t < kThreads; ++t) {
    EXPECT(errors[t].empty(), errors[t]);
    for (size_t i = 0; i < results[t].size(); ++i)
      EXPECT(results[t][i] == serial[t][i % serial[t].size()], "own models, thread " + std::to_string(t) +
                                                                   ", call " + std::to_string(i) +
                                                                   ": not the serial result");
    anycl_model_destroy(models[t]);
  }
}

void background_training_beside_predictions(anycl_runtime* rt, anycl_dataset* data, const Data& d) {
  std::string error;
  anycl_model* solo = new_model("32,32");
  const std::vector<double> solo_losses = train(solo, rt, data, 4, 7, &error);
  EXPECT(solo_losses.size() == 4, error);
  anycl_model_destroy(solo);
  anycl_model* predictor = new_model("16");
  EXPECT(!train(predictor, rt, data, 3, 3, &error).empty(), error);
  const std::vector<std::vector<float>> serial = predict_calls(predictor, rt, d, 1, &error);

  anycl_model* background = new_model("32,32");
  std::vector<double> losses;
  std::string train_error;
  std::atomic<bool> training_done{false};
  std::thread trainer([&] {
    losses = train(background, rt, data, 4, 7, &train_error);
    training_done = true;
  });
  std::vector<std::vector<float>> results;
  std::string predict_error;
  size_t rounds = 0;
  do {  // at least twice, and on while the training runs
    const auto r = predict_calls(predictor, rt, d, 1, &predict_error);
    results.insert(results.end(), r.begin(), r.end());
  } while (++rounds < 2 || !training_done);
  trainer.join();
  EXPECT(train_error.empty(), train_error);
  EXPECT(predict_error.empty(), predict_error);
  EXPECT(losses == solo_losses, "the background training's losses differ from the same training alone");
  for (size_t i = 0; i < results.size(); ++i)
    EXPECT(results[i] == serial[i % serial.size()],
           "predictions beside training, call " + std::to_string(i) + ": not the serial result");
  anycl_model_destroy(background);
  anycl_model_destroy(predictor);
}

}  // namespace

int main() {
  // A deadlock must fail the test, not hang CI.
  std::thread([] {
    std::this_thread::sleep_for(std::chrono::seconds(kWatchdogSeconds));
    std::fprintf(stderr, "c_api_threads_test: still running after %d s — a deadlock? failing\n",
                 kWatchdogSeconds);
    std::_Exit(124);
  }).detach();
  if (anycl_check_version(ANYCL_API_VERSION) != ANYCL_OK) {
    std::fprintf(stderr, "%s\n", anycl_last_error());
    return 1;
  }
  first_use_from_threads();  // before anything else: the process's first OpenCL use
  size_t length = 0;
  if (anycl_devices_json(nullptr, 0, &length) == ANYCL_ERROR_DEVICE) {
    const char* ci = std::getenv("CI");
    std::fprintf(stderr, "[anycl test skipped] no OpenCL device: %s\n", anycl_last_error());
    return ci && std::strcmp(ci, "true") == 0 ? 1 : 77;
  }

  anycl_runtime* rt = nullptr;
  if (anycl_runtime_create("", &rt) != ANYCL_OK) {
    std::fprintf(stderr, "runtime: %s\n", anycl_last_error());
    return 1;
  }
  const Data d;
  anycl_dataset* data = nullptr;
  if (anycl_dataset_create_classes(d.x.data(), kSamples, 2, d.y.data(), 2, &data) != ANYCL_OK) {
    std::fprintf(stderr, "data set: %s\n", anycl_last_error());
    return 1;
  }
  threads_share_one_model(rt, data, d);
  threads_evaluate_one_model(rt, data, d);
  threads_with_own_models(rt, data, d);
  background_training_beside_predictions(rt, data, d);
  anycl_dataset_destroy(data);
  anycl_runtime_destroy(rt);
  std::fprintf(stderr, "c_api_threads_test: %d failure(s)\n", failures);
  return failures == 0 ? 0 : 1;
}
