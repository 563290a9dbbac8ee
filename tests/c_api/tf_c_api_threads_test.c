/* TensorFlow's C API names from many threads: TF_SessionRun on one
 * session while another thread imports into its graph (each run sees the
 * graph before or after an import), then TF_CloseSession while runs are in
 * progress. Compiled as C11 with pthreads. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tf_test_util.h"

enum { kRunners = 6, kRuns = 150, kImports = 10 };

typedef struct {
  TF_Session* session;
  TF_Graph* graph;
  int id;
  atomic_int* stop;  /* NULL: run kRuns times */
  atomic_int* oks;   /* successful runs of all runners (may be NULL) */
  int bad;           /* wrong answers, unexpected errors */
  int ok, cancelled;
} Runner;

/* Feeds values of its own and checks pred = X*W + b for each run. */
static void* runner(void* arg) {
  Runner* r = (Runner*)arg;
  TF_Status* s = TF_NewStatus();
  TF_Output in = {TF_GraphOperationByName(r->graph, "X"), 0};
  TF_Output pred = {TF_GraphOperationByName(r->graph, "pred"), 0};
  const int64_t n = 3;
  for (int k = 0; r->stop ? !atomic_load(r->stop) : k < kRuns; ++k) {
    const float xs[3] = {(float)(r->id * 100000 + k), (float)-k, 0.5f};
    TF_Tensor* x = TF_AllocateTensor(TF_FLOAT, &n, 1, sizeof xs);
    memcpy(TF_TensorData(x), xs, sizeof xs);
    TF_Tensor* y = NULL;
    TF_SessionRun(r->session, NULL, &in, &x, 1, &pred, &y, 1, NULL, 0, NULL, s);
    if (TF_GetCode(s) == TF_OK) {
      ++r->ok;
      if (r->oks) atomic_fetch_add(r->oks, 1);
      for (int i = 0; i < 3; ++i) {
        const double want = xs[i] * REGRESSION_W + REGRESSION_B;
        if (fabs(tf_float_at(y, i) - want) > 1e-6 * (1 + fabs(want))) ++r->bad;
      }
    } else if (r->stop != NULL && TF_GetCode(s) == TF_CANCELLED) {
      ++r->cancelled;  /* closed under it: TensorFlow's CANCELLED */
    } else {
      fprintf(stderr, "runner %d: %d %s\n", r->id, (int)TF_GetCode(s), TF_Message(s));
      ++r->bad;
    }
    TF_DeleteTensor(y);
    TF_DeleteTensor(x);
  }
  TF_DeleteStatus(s);
  return NULL;
}

typedef struct {
  TF_Graph* graph;
  int failures;
} Importer;

static void* importer(void* arg) {
  Importer* im = (Importer*)arg;
  TF_Status* s = TF_NewStatus();
  for (int i = 0; i < kImports; ++i) {
    char prefix[16];
    snprintf(prefix, sizeof prefix, "imp%d", i);
    import_regression(im->graph, prefix, s);
    if (TF_GetCode(s) != TF_OK) ++im->failures;
  }
  TF_DeleteStatus(s);
  return NULL;
}

static void test_concurrent_runs_and_imports(void) {
  REQUIRE_TESTDATA(REGRESSION_PB);
  TF_Status* s = TF_NewStatus();
  TF_Graph* g = TF_NewGraph();
  import_regression(g, NULL, s);
  TF_CHECK_OK(s);
  TF_Session* session = TF_NewSession(g, NULL, s);
  TF_CHECK_OK(s);
  Runner runners[kRunners];
  pthread_t threads[kRunners + 1];
  for (int i = 0; i < kRunners; ++i) {
    runners[i] = (Runner){session, g, i, NULL, NULL, 0, 0, 0};
    CHECK(pthread_create(&threads[i], NULL, runner, &runners[i]) == 0);
  }
  Importer im = {g, 0};
  CHECK(pthread_create(&threads[kRunners], NULL, importer, &im) == 0);
  for (int i = 0; i <= kRunners; ++i) pthread_join(threads[i], NULL);
  for (int i = 0; i < kRunners; ++i) CHECK(runners[i].bad == 0 && runners[i].ok == kRuns);
  CHECK(im.failures == 0);

  /* Every imported copy runs on the session now. */
  for (int i = 0; i < kImports; ++i) {
    char x_name[32], pred_name[32];
    snprintf(x_name, sizeof x_name, "imp%d/X", i);
    snprintf(pred_name, sizeof pred_name, "imp%d/pred", i);
    TF_Output in = tf_out(g, x_name);
    TF_Output pred = tf_out(g, pred_name);
    const int64_t one = 1;
    const float v = (float)i;
    TF_Tensor* x = tf_floats(&one, 1, &v, 1);
    TF_Tensor* y = NULL;
    TF_SessionRun(session, NULL, &in, &x, 1, &pred, &y, 1, NULL, 0, NULL, s);
    TF_CHECK_OK(s);
    CHECK_NEAR(tf_float_at(y, 0), i * REGRESSION_W + REGRESSION_B, 1e-5);
    TF_DeleteTensor(y);
    TF_DeleteTensor(x);
  }
  TF_DeleteSession(session, s);
  TF_CHECK_OK(s);
  TF_DeleteGraph(g);
  TF_DeleteStatus(s);
}

static void test_close_during_runs(void) {
  REQUIRE_TESTDATA(REGRESSION_PB);
  TF_Status* s = TF_NewStatus();
  TF_Graph* g = TF_NewGraph();
  import_regression(g, NULL, s);
  TF_Session* session = TF_NewSession(g, NULL, s);
  TF_CHECK_OK(s);
  atomic_int stop = 0, oks = 0;
  Runner runners[kRunners];
  pthread_t threads[kRunners];
  for (int i = 0; i < kRunners; ++i) {
    runners[i] = (Runner){session, g, i, &stop, &oks, 0, 0, 0};
    CHECK(pthread_create(&threads[i], NULL, runner, &runners[i]) == 0);
  }
  /* Let them run (some runs each, at most ~10 s), close under them, then
   * stop them. */
  const struct timespec pause = {0, 1000 * 1000};
  for (int waited = 0; atomic_load(&oks) < 2 * kRunners && waited < 10000; ++waited) nanosleep(&pause, NULL);
  TF_CloseSession(session, s);
  TF_CHECK_OK(s);
  for (int i = 0; i < 20; ++i) nanosleep(&pause, NULL);
  atomic_store(&stop, 1);
  int ok = 0, cancelled = 0;
  for (int i = 0; i < kRunners; ++i) {
    pthread_join(threads[i], NULL);
    CHECK(runners[i].bad == 0);
    ok += runners[i].ok;
    cancelled += runners[i].cancelled;
  }
  CHECK(ok > 0 && cancelled > 0); /* runs before the close, refusals after */
  TF_DeleteSession(session, s);
  TF_CHECK_OK(s);
  TF_DeleteGraph(g);
  TF_DeleteStatus(s);
}

int main(void) {
  test_concurrent_runs_and_imports();
  test_close_during_runs();
  if (c_test_failures() == 0) printf("all TF C API thread checks passed\n");
  return c_test_exit();
}
