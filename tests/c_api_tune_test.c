/* anycl_tune through the C API as a C11 program sees it: a progress callback that asks to stop after
 * the first candidate ends the tuning with ANYCL_OK, the best set found kept and the device's tuning
 * file written; with ANYCL_TUNE_WORKER naming no file (the "missing-worker" mode), the call fails with
 * ANYCL_ERROR_UNSUPPORTED and says what to do. CTest runs it with ANYCL_CACHE_DIR at a scratch folder
 * and the small test tuning database (tests/CMakeLists.txt). */
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "c_api_check.h"

typedef struct seen {
  size_t calls, first_candidates, lines_after_stop;
  int asked;
} seen;

static int stop_after_first(const anycl_tune_progress* p, void* user) {
  seen* s = (seen*)user;
  ++s->calls;
  if (s->asked) ++s->lines_after_stop;
  CHECK(p->line != NULL && p->stage != NULL);
  if (p->candidates >= 1 && !s->asked) {
    s->first_candidates = p->candidates;
    s->asked = 1;
  }
  return s->asked;
}

static void stopped_by_callback(anycl_runtime* rt) {
  anycl_model* model = flat_model("24", NULL, 40, 3);
  if (!model) return;
  anycl_tune_options o;
  anycl_tune_options_init(&o);
  o.minutes = 30; /* the callback ends it long before */
  o.batch = 48;
  seen s = {0, 0, 0, 0};
  o.on_progress = stop_after_first;
  o.user = &s;
  anycl_tune_result r;
  anycl_tune_result_init(&r);
  CHECK_STATUS(anycl_tune(model, rt, &o, &r), ANYCL_OK, "");
  CHECK(r.tuned == 1);
  CHECK(r.stopped == 1);
  CHECK(s.first_candidates == 1);
  /* At least the one the callback saw, and any the worker finished before the stop was seen (the
     parent reads results every 0.1 s; with PoCL's cache warm the whole first shortlist took 0.24 s):
     at most that shortlist, CLBlast's current XgemmDirect set and the small database's two. The
     second stage never starts once the stop is seen. */
  CHECK(r.candidates >= 1);
  CHECK(r.candidates <= 3);
  CHECK(r.ms_before > 0);
  /* API version 5: what it was measured against (the small database matches no device: CLBlast's own)
   * and whether that was kept (not when stopped). */
  CHECK(strcmp(r.against, "CLBlast's own parameters") == 0);
  CHECK(r.kept_entry == 0);
  char path[4096];
  size_t length = 0;
  CHECK_STATUS(anycl_tuning_file_path(rt, path, sizeof path, &length), ANYCL_OK, "");
  FILE* f = fopen(path, "rb");
  CHECK(f != NULL);
  if (f) {
    char text[8192];
    const size_t n = fread(text, 1, sizeof text - 1, f);
    text[n] = '\0';
    fclose(f);
    CHECK(strstr(text, "XgemmDirect") != NULL); /* the best set of the stage it stopped in */
  }
  /* Tuned now: first-use tuning has nothing to do here, and says why. */
  char why[4096];
  CHECK_STATUS(anycl_first_use_tuning_skipped(rt, why, sizeof why, &length), ANYCL_OK, "");
  CHECK(strstr(why, "tuned before") != NULL);
  anycl_tune_options_init(&o);
  o.first_use = 1;
  anycl_tune_result_init(&r);
  strcpy(r.against, "stale");
  CHECK_STATUS(anycl_tune(model, rt, &o, &r), ANYCL_OK, "");
  CHECK(r.tuned == 0);
  CHECK(r.against[0] == '\0'); /* it did not tune: nothing was measured against */
  /* A caller built against version 4's header: its shorter struct is accepted and written up to its
   * size, the fields version 5 appended left as they were. */
  anycl_tune_result_init(&r);
  r.struct_size = offsetof(anycl_tune_result, kept_entry);
  r.tuned = 5;
  r.kept_entry = 7;
  strcpy(r.against, "untouched");
  CHECK_STATUS(anycl_tune(model, rt, &o, &r), ANYCL_OK, "");
  CHECK(r.tuned == 0);
  CHECK(r.kept_entry == 7);
  CHECK(strcmp(r.against, "untouched") == 0);
  r.struct_size = offsetof(anycl_tune_result, kept_entry) - 1; /* any other shorter size: refused */
  CHECK_STATUS(anycl_tune(model, rt, &o, &r), ANYCL_ERROR_INVALID_ARGUMENT, "anycl_tune_result_init");
  /* Nonsense is refused in the call's own words. */
  o.minutes = -1;
  CHECK_STATUS(anycl_tune(model, rt, &o, NULL), ANYCL_ERROR_INVALID_ARGUMENT, "anycl_tune: minutes");
  CHECK_STATUS(anycl_tune(NULL, rt, NULL, NULL), ANYCL_ERROR_INVALID_ARGUMENT, "anycl_tune");
  anycl_model_destroy(model);
}

static void missing_worker(anycl_runtime* rt) {
  anycl_model* model = flat_model("24", NULL, 40, 3);
  if (!model) return;
  CHECK_STATUS(anycl_tune(model, rt, NULL, NULL), ANYCL_ERROR_UNSUPPORTED, "ANYCL_TUNE_WORKER");
  CHECK(strstr(anycl_last_error(), "anycl-tune-worker") != NULL);
  anycl_model_destroy(model);
}

int main(int argc, char** argv) {
  if (argc != 2 || (strcmp(argv[1], "stop") != 0 && strcmp(argv[1], "missing-worker") != 0)) {
    fprintf(stderr, "usage: c_api_tune_test stop|missing-worker\n");
    return 2;
  }
  if (anycl_check_version(ANYCL_API_VERSION) != ANYCL_OK) {
    fprintf(stderr, "%s\n", anycl_last_error());
    return 1;
  }
  anycl_runtime* rt = NULL;
  const anycl_status s = anycl_runtime_create(NULL, &rt);
  if (s == ANYCL_ERROR_DEVICE) return skip_or_fail(anycl_last_error());
  CHECK(s == ANYCL_OK);
  if (s != ANYCL_OK) return 1;
  if (strcmp(argv[1], "stop") == 0)
    stopped_by_callback(rt);
  else
    missing_worker(rt);
  anycl_runtime_destroy(rt);
  return c_api_failures;
}
