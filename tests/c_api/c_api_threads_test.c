/* Many threads on one session and on one SavedModel through the C API
 * (pthreads), and Close while runs are in progress. Compiled as C11. */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "c_test_util.h"

enum { kThreads = 8, kRunsPerThread = 200 };

/* pred = X*W + b of TF's frozen regression graph (README item 10). */
static const double kW = 0.21396178, kB = 1.0495254;

typedef struct {
  GRC_Session* session;
  GRC_SavedModel* model;
  int index;
  int failures;       /* wrong results or errors */
  atomic_int* stop;   /* for the close test */
  int ok_runs;
  int cancelled_runs;
} Worker;

/* Each thread feeds its own values and checks its own answers. */
static void* run_session(void* arg) {
  Worker* w = arg;
  GRC_Status* s = GRC_NewStatus();
  const char* in_names[1] = {"X:0"};
  const char* out_names[1] = {"pred:0"};
  const int64_t n = 4;
  for (int r = 0; r < kRunsPerThread; ++r) {
    float xs[4];
    for (int i = 0; i < 4; ++i) xs[i] = (float)(w->index * 1000 + r * 4 + i);
    GRC_Tensor* x = GRC_NewAllocatedTensor(GRC_FLOAT, &n, 1, s);
    memcpy(GRC_TensorData(x), xs, sizeof xs);
    GRC_Tensor* out = NULL;
    if (!GRC_SessionRun(w->session, NULL, 0, in_names, &x, 1, out_names, &out, 1, NULL, 0, NULL, s)) {
      ++w->failures;
    } else {
      const float* y = GRC_TensorData(out);
      for (int i = 0; i < 4; ++i) {
        const double want = xs[i] * kW + kB;
        if (fabs(y[i] - want) > 1e-6 * (1 + fabs(want))) ++w->failures;
      }
    }
    GRC_DeleteTensor(out);
    GRC_DeleteTensor(x);
  }
  GRC_DeleteStatus(s);
  return NULL;
}

/* half_plus_two's serving_default: y = 0.5x + 2. */
static void* run_signature(void* arg) {
  Worker* w = arg;
  GRC_Status* s = GRC_NewStatus();
  const char* in_keys[1] = {"x"};
  const char* out_keys[1] = {"y"};
  const int64_t dims[2] = {2, 1};
  for (int r = 0; r < kRunsPerThread; ++r) {
    const float xs[2] = {(float)(w->index * 1000 + r), (float)-r};
    GRC_Tensor* x = float_tensor(dims, 2, xs, 2);
    GRC_Tensor* out = NULL;
    if (!GRC_SavedModelRunSignature(w->model, "serving_default", in_keys, &x, 1, out_keys, &out, 1, s)) {
      ++w->failures;
    } else if (float_at(out, 0) != 0.5f * xs[0] + 2 || float_at(out, 1) != 0.5f * xs[1] + 2) {
      ++w->failures;
    }
    GRC_DeleteTensor(out);
    GRC_DeleteTensor(x);
  }
  GRC_DeleteStatus(s);
  return NULL;
}

/* Runs until told to stop; every run either succeeds or is cancelled. */
static void* run_until_closed(void* arg) {
  Worker* w = arg;
  GRC_Status* s = GRC_NewStatus();
  const char* in_names[1] = {"X:0"};
  const char* out_names[1] = {"pred:0"};
  GRC_Tensor* x = float_scalar(1.0f);
  while (!atomic_load(w->stop)) {
    GRC_Tensor* out = NULL;
    if (GRC_SessionRun(w->session, NULL, 0, in_names, &x, 1, out_names, &out, 1, NULL, 0, NULL, s)) {
      ++w->ok_runs;
      if (fabs(float_at(out, 0) - (kW + kB)) > 1e-6) ++w->failures;
    } else if (GRC_GetCode(s) == GRC_CANCELLED) {
      ++w->cancelled_runs;
      if (out != NULL) ++w->failures;
    } else {
      fprintf(stderr, "unexpected: %s: %s\n", GRC_CodeName(GRC_GetCode(s)), GRC_Message(s));
      ++w->failures;
    }
    GRC_DeleteTensor(out);
  }
  GRC_DeleteTensor(x);
  GRC_DeleteStatus(s);
  return NULL;
}

static void sleep_ms(int ms) {
  struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
  nanosleep(&ts, NULL);
}

int main(void) {
  if (!testdata_present(__func__, "tf2onnx/models/regression/graphdef/frozen.pb")) return c_test_exit();
  if (!testdata_present(__func__, "serving/saved_model_half_plus_two_cpu/00000123/saved_model.pb")) return c_test_exit();
  GRC_Status* s = GRC_NewStatus();
  GRC_Graph* g = GRC_NewGraphFromFile(testdata("tf2onnx/models/regression/graphdef/frozen.pb"), s);
  CHECK_OK(s);
  GRC_Session* session = GRC_NewSession(g, NULL, s);
  CHECK_OK(s);
  GRC_SavedModel* model = GRC_LoadSavedModel(testdata("serving/saved_model_half_plus_two_cpu/00000123"), NULL, 0,
                                             NULL, s);
  CHECK_OK(s);
  if (session == NULL || model == NULL) return 1;

  /* Half the threads on the session, half on the model's signature, all at once. */
  pthread_t threads[kThreads];
  Worker workers[kThreads];
  for (int i = 0; i < kThreads; ++i) {
    workers[i] = (Worker){session, model, i, 0, NULL, 0, 0};
    CHECK(pthread_create(&threads[i], NULL, i % 2 ? run_signature : run_session, &workers[i]) == 0);
  }
  for (int i = 0; i < kThreads; ++i) {
    pthread_join(threads[i], NULL);
    if (workers[i].failures) fprintf(stderr, "thread %d: %d failed runs\n", i, workers[i].failures);
    CHECK(workers[i].failures == 0);
  }

  /* Close while threads run: runs in progress end (OK or CANCELLED), Close
   * returns after them, and every later run is CANCELLED. */
  atomic_int stop = 0;
  for (int i = 0; i < kThreads; ++i) {
    workers[i] = (Worker){session, NULL, i, 0, &stop, 0, 0};
    CHECK(pthread_create(&threads[i], NULL, run_until_closed, &workers[i]) == 0);
  }
  sleep_ms(50);
  CHECK(GRC_CloseSession(session, s));
  CHECK_OK(s);
  sleep_ms(20);
  atomic_store(&stop, 1);
  int ok_runs = 0, cancelled = 0;
  for (int i = 0; i < kThreads; ++i) {
    pthread_join(threads[i], NULL);
    CHECK(workers[i].failures == 0);
    ok_runs += workers[i].ok_runs;
    cancelled += workers[i].cancelled_runs;
  }
  CHECK(ok_runs > 0);
  CHECK(cancelled > 0);
  printf("close test: %d runs before the close, %d cancelled\n", ok_runs, cancelled);

  GRC_DeleteSession(session);
  GRC_DeleteSavedModel(model);
  GRC_DeleteGraph(g);
  GRC_DeleteStatus(s);
  if (c_test_failures() == 0) printf("all C API thread checks passed\n");
  return c_test_exit();
}
