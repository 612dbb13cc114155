// The C API in a child forked after the parent used OpenCL (docs/guarantees.md, "Processes"): the
// driver's threads stay in the parent, so every call that would touch OpenCL fails at once with
// ANYCL_ERROR_UNSUPPORTED naming the fix ('spawn'), never a hang (an alarm ends a hung child).
// POSIX only (Windows has no fork): exit code 77 there and without a device (skipped).
#include <anycl/anycl.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#ifndef _WIN32
#include <sys/wait.h>
#include <unistd.h>
#endif

namespace {

int skip(const char* why) {
  const char* ci = std::getenv("CI");
  std::fprintf(stderr, "[anycl test skipped] %s\n", why);
  return ci && std::strcmp(ci, "true") == 0 && std::strstr(why, "device") ? 1 : 77;
}

#ifndef _WIN32
// In the child: 0 when each call is refused with the cause and the fix.
int child(anycl_runtime* rt, anycl_model* model) {
  alarm(60);  // a hang ends the child with SIGALRM, which the parent reports
  int failures = 0;
  auto refused = [&](anycl_status status, const char* what) {
    const std::string message = anycl_last_error();
    if (status != ANYCL_ERROR_UNSUPPORTED || message.find("forked") == std::string::npos ||
        message.find("spawn") == std::string::npos) {
      std::fprintf(stderr, "child: %s returned %s: %s\n", what, anycl_status_name(status), message.c_str());
      ++failures;
    }
  };
  size_t length = 0;
  refused(anycl_devices_json(nullptr, 0, &length), "anycl_devices_json");
  anycl_runtime* fresh = nullptr;
  refused(anycl_runtime_create("", &fresh), "anycl_runtime_create");
  const float x[2] = {0.25f, 0.5f};
  float out[2];
  refused(anycl_predict(model, rt, x, 1, out, 2), "anycl_predict on the parent's runtime");
  anycl_runtime_destroy(rt);  // left behind, not released (releasing could hang)
  return failures;
}
#endif

}  // namespace

int main() {
#ifdef _WIN32
  return skip("no fork on Windows");
#else
  anycl_runtime* rt = nullptr;
  if (anycl_runtime_create("", &rt) != ANYCL_OK) return skip("no OpenCL device");
  float x[64];
  int32_t y[32];
  for (int i = 0; i < 32; ++i) x[2 * i] = float(i % 5) / 5.f, x[2 * i + 1] = float(i % 3) / 3.f, y[i] = i % 2;
  anycl_dataset* data = nullptr;
  anycl_model_options mo;
  anycl_model_options_init(&mo);
  mo.layers = "8";
  mo.input_shape[0] = 2;
  mo.outputs = 2;
  anycl_model* model = nullptr;
  anycl_train_options to;
  anycl_train_options_init(&to);
  to.epochs = 1;
  to.batch = 8;
  if (anycl_dataset_create_classes(x, 32, 2, y, 2, &data) != ANYCL_OK ||
      anycl_model_create(&mo, &model) != ANYCL_OK ||
      anycl_train(model, rt, data, nullptr, &to, nullptr, 0, nullptr, nullptr) != ANYCL_OK) {
    std::fprintf(stderr, "set-up: %s\n", anycl_last_error());
    return 1;
  }
  std::fflush(nullptr);
  const pid_t pid = fork();
  if (pid == 0) _exit(child(rt, model));
  int status = 0;
  waitpid(pid, &status, 0);
  int failures = 0;
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    std::fprintf(stderr, "the forked child failed (%s %d)\n", WIFEXITED(status) ? "exit" : "signal",
                 WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status));
    ++failures;
  }
  float out[2];
  if (anycl_predict(model, rt, x, 1, out, 2) != ANYCL_OK) {  // the parent is unaffected
    std::fprintf(stderr, "parent: %s\n", anycl_last_error());
    ++failures;
  }
  anycl_model_destroy(model);
  anycl_dataset_destroy(data);
  anycl_runtime_destroy(rt);
  std::fprintf(stderr, "c_api_fork_test: %d failure(s)\n", failures);
  return failures == 0 ? 0 : 1;
#endif
}
