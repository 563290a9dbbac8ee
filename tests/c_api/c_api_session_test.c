/* Sessions through the C API on TensorFlow-written graphs (tf_testdata
 * README items 4 and 10), zero-copy feeds and the run error paths.
 * Compiled as C11. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "c_test_util.h"

static GRC_Session* open_session(const char* rel_path) {
  GRC_Status* s = GRC_NewStatus();
  GRC_Graph* g = GRC_NewGraphFromFile(testdata(rel_path), s);
  CHECK_OK(s);
  GRC_Session* session = g ? GRC_NewSession(g, NULL, s) : NULL;
  CHECK_OK(s);
  GRC_DeleteGraph(g); /* the session keeps its own copy */
  GRC_DeleteStatus(s);
  return session;
}

#define FROZEN "tf2onnx/models/regression/graphdef/frozen.pb"

/* Item 10: pred = X*W + b, W = 0.21396178, b = 1.0495254. */
static void test_regression_frozen(void) {
  REQUIRE_TESTDATA(FROZEN);
  GRC_Status* s = GRC_NewStatus();
  GRC_Session* session = open_session(FROZEN);
  const int64_t two = 2;
  const float xs[2] = {2, 3};
  GRC_Tensor* x = float_tensor(&two, 1, xs, 2);
  const char* in_names[1] = {"X:0"};
  const char* out_names[1] = {"pred:0"};
  GRC_Tensor* out[1] = {NULL};
  CHECK(GRC_SessionRun(session, NULL, 0, in_names, &x, 1, out_names, out, 1, NULL, 0, NULL, s));
  CHECK_OK(s);
  CHECK(out[0] != NULL && GRC_TensorNumDims(out[0]) == 1 && GRC_TensorDim(out[0], 0) == 2);
  CHECK_NEAR(float_at(out[0], 0), 1.4774489, 1e-6);
  CHECK_NEAR(float_at(out[0], 1), 1.6914107, 1e-6);
  GRC_DeleteTensor(out[0]);

  /* Feed names without ":0", and RunOptions/RunMetadata as bytes: an empty
   * RunOptions, then trace_level FULL_TRACE (field 1 = 3). */
  const char* bare_in[1] = {"X"};
  GRC_Buffer* md = GRC_NewBuffer();
  const unsigned char full_trace[2] = {0x08, 0x03};
  CHECK(GRC_SessionRun(session, full_trace, sizeof full_trace, bare_in, &x, 1, out_names, out, 1, NULL, 0, md, s));
  CHECK_OK(s);
  CHECK(GRC_BufferLength(md) > 0 && GRC_BufferData(md) != NULL); /* step stats */
  CHECK_NEAR(float_at(out[0], 1), 1.6914107, 1e-6);
  GRC_DeleteTensor(out[0]);
  const unsigned char empty = 0;
  CHECK(GRC_SessionRun(session, &empty, 0, in_names, &x, 1, out_names, out, 1, NULL, 0, md, s));
  CHECK_OK(s);
  GRC_DeleteTensor(out[0]);
  GRC_DeleteBuffer(md);

  /* Error paths: each returns 0, leaves the outputs NULL and names the culprit. */
  const char* unknown_fetch[1] = {"nope:0"};
  out[0] = (GRC_Tensor*)&empty; /* must be overwritten with NULL */
  CHECK(!GRC_SessionRun(session, NULL, 0, in_names, &x, 1, unknown_fetch, out, 1, NULL, 0, NULL, s));
  CHECK_ERROR(s, GRC_NOT_FOUND, "nope");
  CHECK(out[0] == NULL);
  const char* unknown_feed[1] = {"missing_input:0"};
  CHECK(!GRC_SessionRun(session, NULL, 0, unknown_feed, &x, 1, out_names, out, 1, NULL, 0, NULL, s));
  CHECK_ERROR(s, GRC_NOT_FOUND, "missing_input");
  const char* unknown_target[1] = {"no_such_op"};
  CHECK(!GRC_SessionRun(session, NULL, 0, NULL, NULL, 0, NULL, NULL, 0, unknown_target, 1, NULL, s));
  CHECK_ERROR(s, GRC_NOT_FOUND, "no_such_op");
  /* An int32 feed for the float placeholder X. */
  const int64_t one = 1;
  GRC_Tensor* xi = GRC_NewAllocatedTensor(GRC_INT32, &one, 1, s);
  CHECK(!GRC_SessionRun(session, NULL, 0, in_names, &xi, 1, out_names, out, 1, NULL, 0, NULL, s));
  CHECK_ERROR(s, GRC_INVALID_ARGUMENT, "X");
  CHECK(strstr(GRC_Message(s), "int32") != NULL);
  GRC_DeleteTensor(xi);
  /* No feed for X. */
  CHECK(!GRC_SessionRun(session, NULL, 0, NULL, NULL, 0, out_names, out, 1, NULL, 0, NULL, s));
  CHECK(GRC_GetCode(s) == GRC_INVALID_ARGUMENT);
  CHECK(strstr(GRC_Message(s), "X") != NULL);
  /* Bad RunOptions bytes, a NULL input, NULL arrays. */
  const unsigned char junk[3] = {0xff, 0xff, 0xff};
  CHECK(!GRC_SessionRun(session, junk, sizeof junk, in_names, &x, 1, out_names, out, 1, NULL, 0, NULL, s));
  CHECK_ERROR(s, GRC_INVALID_ARGUMENT, "RunOptions");
  GRC_Tensor* null_input = NULL;
  CHECK(!GRC_SessionRun(session, NULL, 0, in_names, &null_input, 1, out_names, out, 1, NULL, 0, NULL, s));
  CHECK_ERROR(s, GRC_INVALID_ARGUMENT, "input 0 ('X:0') is NULL");
  CHECK(!GRC_SessionRun(session, NULL, 0, in_names, &x, 1, out_names, NULL, 1, NULL, 0, NULL, s));
  CHECK_ERROR(s, GRC_INVALID_ARGUMENT, "outputs is NULL");
  CHECK(!GRC_SessionRun(NULL, NULL, 0, in_names, &x, 1, out_names, out, 1, NULL, 0, NULL, s));
  CHECK_ERROR(s, GRC_INVALID_ARGUMENT, "session is NULL");

  /* Run after close: CANCELLED, as TensorFlow's closed session answers. */
  CHECK(GRC_CloseSession(session, s));
  CHECK_OK(s);
  CHECK(!GRC_SessionRun(session, NULL, 0, in_names, &x, 1, out_names, out, 1, NULL, 0, NULL, s));
  CHECK_ERROR(s, GRC_CANCELLED, "closed");
  CHECK(out[0] == NULL);
  CHECK(GRC_CloseSession(session, s)); /* twice is fine */
  GRC_DeleteSession(session);
  GRC_DeleteTensor(x);
  GRC_DeleteStatus(s);
}

/* Session options: threads and a ConfigProto given as bytes. */
static void test_options(void) {
  REQUIRE_TESTDATA(FROZEN);
  GRC_Status* s = GRC_NewStatus();
  GRC_SessionOptions* o = GRC_NewSessionOptions();
  /* ConfigProto: intra_op_parallelism_threads (2) = 2, inter_op (5) = 1. */
  const unsigned char config[4] = {0x10, 0x02, 0x28, 0x01};
  CHECK(GRC_SetConfig(o, config, sizeof config, s));
  CHECK_OK(s);
  const unsigned char junk[2] = {0x10, 0xff};
  CHECK(!GRC_SetConfig(o, junk, sizeof junk, s));
  CHECK_ERROR(s, GRC_INVALID_ARGUMENT, "ConfigProto");
  CHECK(!GRC_SetThreads(o, -1, 0, s));
  CHECK_ERROR(s, GRC_INVALID_ARGUMENT, "-1");
  CHECK(GRC_SetThreads(o, 1, 1, s));
  GRC_Graph* g = GRC_NewGraphFromFile(testdata(FROZEN), s);
  GRC_Session* session = GRC_NewSession(g, o, s);
  CHECK_OK(s);
  GRC_Tensor* x = float_scalar(1.0f);
  const char* in_names[1] = {"X:0"};
  const char* out_names[1] = {"pred:0"};
  GRC_Tensor* out = NULL;
  CHECK(GRC_SessionRun(session, NULL, 0, in_names, &x, 1, out_names, &out, 1, NULL, 0, NULL, s));
  CHECK_OK(s);
  CHECK_NEAR(float_at(out, 0), 1.2634872, 1e-6);
  GRC_DeleteTensor(out);
  GRC_DeleteTensor(x);
  GRC_DeleteSession(session);
  GRC_DeleteGraph(g);
  GRC_DeleteSessionOptions(o);

  /* A graph with an op no plugin defines: NewSession fails naming the node
   * and the op. */
  const char* text = "node { name: \"mystery\" op: \"NoSuchOpAnywhere\" }";
  g = GRC_NewGraphFromText(text, strlen(text), s);
  CHECK_OK(s);
  CHECK(GRC_NewSession(g, NULL, s) == NULL);
  CHECK_ERROR(s, GRC_NOT_FOUND, "mystery");
  CHECK(strstr(GRC_Message(s), "NoSuchOpAnywhere") != NULL);
  GRC_DeleteGraph(g);
  CHECK(GRC_NewSession(NULL, NULL, s) == NULL);
  CHECK_ERROR(s, GRC_INVALID_ARGUMENT, "graph is NULL");
  GRC_DeleteStatus(s);
}

/* Item 4: the counter's ref variable, run step by step in one session. */
static float run_counter(GRC_Session* session, const char* fetch, GRC_Tensor* delta, GRC_Status* s) {
  const char* in_names[1] = {"delta:0"};
  GRC_Tensor* out = NULL;
  GRC_SessionRun(session, NULL, 0, in_names, &delta, delta ? 1 : 0, &fetch, &out, 1, NULL, 0, NULL, s);
  CHECK_OK(s);
  CHECK(out == NULL || (GRC_TensorType(out) == GRC_FLOAT && GRC_TensorNumDims(out) == 0));
  const float v = float_at(out, 0);
  GRC_DeleteTensor(out);
  return v;
}

static void test_counter(void) {
  REQUIRE_TESTDATA("derived/counter.graphdef.pb");
  GRC_Status* s = GRC_NewStatus();
  GRC_Session* session = open_session("derived/counter.graphdef.pb");
  const char* counter = "counter:0";
  GRC_Tensor* out = NULL;
  CHECK(!GRC_SessionRun(session, NULL, 0, NULL, NULL, 0, &counter, &out, 1, NULL, 0, NULL, s));
  CHECK_ERROR(s, GRC_FAILED_PRECONDITION, "counter");
  const char* init = "init";
  CHECK(GRC_SessionRun(session, NULL, 0, NULL, NULL, 0, NULL, NULL, 0, &init, 1, NULL, s));
  CHECK_OK(s);
  CHECK_NEAR(run_counter(session, "counter:0", NULL, s), 0.0, 0);
  CHECK_NEAR(run_counter(session, "incr_counter_op/AssignAdd:0", NULL, s), 1.0, 0);
  CHECK_NEAR(run_counter(session, "incr_counter_op/AssignAdd:0", NULL, s), 2.0, 0);
  GRC_Tensor* delta = float_scalar(2.5f);
  CHECK_NEAR(run_counter(session, "incr_counter_by_op/AssignAdd:0", delta, s), 4.5, 0);
  GRC_DeleteTensor(delta);
  CHECK_NEAR(run_counter(session, "reset_counter_op/Assign:0", NULL, s), 0.0, 0);
  CHECK_NEAR(run_counter(session, "counter:0", NULL, s), 0.0, 0);
  GRC_DeleteSession(session);
  GRC_DeleteStatus(s);
}

/* Zero-copy feeds: the deallocator's calls. */
typedef struct {
  int calls;
  void* data;
  size_t len;
} DeallocLog;

static void log_dealloc(void* data, size_t len, void* arg) {
  DeallocLog* log = arg;
  ++log->calls;
  log->data = data;
  log->len = len;
}

static void free_and_log(void* data, size_t len, void* arg) {
  log_dealloc(data, len, arg);
  free(data);
}

static void test_zero_copy(void) {
  REQUIRE_TESTDATA(FROZEN);
  GRC_Status* s = GRC_NewStatus();
  GRC_Session* session = open_session(FROZEN);
  const int64_t three = 3;
  float* mem = aligned_alloc(64, 64);
  mem[0] = 1, mem[1] = 2, mem[2] = 3;
  DeallocLog log = {0, NULL, 0};
  GRC_Tensor* x = GRC_NewTensor(GRC_FLOAT, &three, 1, mem, 3 * sizeof(float), free_and_log, &log, s);
  CHECK_OK(s);
  CHECK(GRC_TensorData(x) == mem); /* no copy */
  const char* in_names[1] = {"X:0"};
  /* Fetching the fed tensor itself hands back the same buffer. */
  const char* out_names[2] = {"pred:0", "X:0"};
  GRC_Tensor* out[2] = {NULL, NULL};
  CHECK(GRC_SessionRun(session, NULL, 0, in_names, &x, 1, out_names, out, 2, NULL, 0, NULL, s));
  CHECK_OK(s);
  CHECK_NEAR(float_at(out[0], 0), 1.2634872, 1e-6);
  CHECK_NEAR(float_at(out[0], 2), 0.21396178 * 3 + 1.0495254, 1e-6);
  CHECK(GRC_TensorData(out[1]) == mem);
  CHECK(log.calls == 0);
  /* Runs again with the same tensor: still no deallocation. */
  GRC_Tensor* again = NULL;
  CHECK(GRC_SessionRun(session, NULL, 0, in_names, &x, 1, out_names, &again, 1, NULL, 0, NULL, s));
  GRC_DeleteTensor(again);
  GRC_DeleteTensor(x);
  CHECK(log.calls == 0); /* out[1] still uses the buffer */
  CHECK_NEAR(float_at(out[1], 1), 2.0, 0);
  GRC_DeleteTensor(out[1]);
  CHECK(log.calls == 1); /* the last user let go; the session keeps nothing */
  CHECK(log.data == mem && log.len == 3 * sizeof(float));
  GRC_DeleteTensor(out[0]);
  GRC_DeleteSession(session);
  CHECK(log.calls == 1); /* exactly once */

  /* Memory that is not 64-byte aligned is copied and given back at once. */
  session = open_session(FROZEN);
  DeallocLog log2 = {0, NULL, 0};
  char* block = aligned_alloc(64, 128);
  float* unaligned = (float*)(block + 4);
  unaligned[0] = 2, unaligned[1] = 3, unaligned[2] = 5;
  x = GRC_NewTensor(GRC_FLOAT, &three, 1, unaligned, 3 * sizeof(float), log_dealloc, &log2, s);
  CHECK_OK(s);
  CHECK(log2.calls == 1 && log2.data == unaligned);
  CHECK(GRC_TensorData(x) != unaligned);
  unaligned[0] = -100; /* the tensor has its own copy */
  CHECK(GRC_SessionRun(session, NULL, 0, in_names, &x, 1, out_names, out, 1, NULL, 0, NULL, s));
  CHECK_OK(s);
  CHECK_NEAR(float_at(out[0], 0), 1.4774489, 1e-6);
  GRC_DeleteTensor(out[0]);
  GRC_DeleteTensor(x);
  CHECK(log2.calls == 1);
  free(block);

  /* On failure the deallocator does not run: the memory stays the caller's. */
  DeallocLog log3 = {0, NULL, 0};
  float* kept = aligned_alloc(64, 64);
  CHECK(GRC_NewTensor(GRC_FLOAT, &three, 1, kept, 2 * sizeof(float), log_dealloc, &log3, s) == NULL);
  CHECK_ERROR(s, GRC_INVALID_ARGUMENT, "len");
  CHECK(GRC_NewTensor(GRC_FLOAT, &three, 1, NULL, 3 * sizeof(float), log_dealloc, &log3, s) == NULL);
  CHECK_ERROR(s, GRC_INVALID_ARGUMENT, "data is NULL");
  CHECK(log3.calls == 0);
  free(kept);

  /* A zero-copy tensor deleted while the session still runs with it would be
   * a race; deleting the session first keeps the buffer alive for the tensor. */
  DeallocLog log4 = {0, NULL, 0};
  float* mem4 = aligned_alloc(64, 64);
  mem4[0] = 1, mem4[1] = 1, mem4[2] = 1;
  x = GRC_NewTensor(GRC_FLOAT, &three, 1, mem4, 3 * sizeof(float), free_and_log, &log4, s);
  CHECK(GRC_SessionRun(session, NULL, 0, in_names, &x, 1, out_names, out, 1, NULL, 0, NULL, s));
  GRC_DeleteTensor(out[0]);
  GRC_DeleteSession(session);
  CHECK(log4.calls == 0);
  CHECK(GRC_TensorData(x) == mem4 && ((float*)GRC_TensorData(x))[0] == 1.0f);
  GRC_DeleteTensor(x);
  CHECK(log4.calls == 1);
  GRC_DeleteStatus(s);
}

int main(void) {
  test_regression_frozen();
  test_options();
  test_counter();
  test_zero_copy();
  if (c_test_failures() == 0) printf("all C API session checks passed\n");
  return c_test_exit();
}
