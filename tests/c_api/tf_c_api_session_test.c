/* TensorFlow's C API names: sessions on an imported graph (the regression
 * graph, tf_testdata README item 10), the documented run semantics and
 * every run error path. Compiled as C11. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tf_test_util.h"

static double regression(double x) { return x * REGRESSION_W + REGRESSION_B; }

/* Runs pred (under prefix: "<prefix>/pred") for xs; the caller owns *out. */
static void run_regression(TF_Session* session, TF_Graph* g, const char* prefix, const float* xs, int64_t n,
                           TF_Tensor** out, TF_Status* s) {
  char x_name[64], pred_name[64];
  snprintf(x_name, sizeof x_name, "%s%sX", prefix ? prefix : "", prefix ? "/" : "");
  snprintf(pred_name, sizeof pred_name, "%s%spred", prefix ? prefix : "", prefix ? "/" : "");
  TF_Output in = tf_out(g, x_name);
  TF_Output fetch = tf_out(g, pred_name);
  TF_Tensor* x = tf_floats(&n, 1, xs, (size_t)n);
  TF_SessionRun(session, NULL, &in, &x, 1, &fetch, out, 1, NULL, 0, NULL, s);
  TF_DeleteTensor(x);
}

static void test_run(void) {
  REQUIRE_TESTDATA(REGRESSION_PB);
  TF_Status* s = TF_NewStatus();
  TF_Graph* g = TF_NewGraph();
  import_regression(g, NULL, s);
  TF_CHECK_OK(s);
  TF_SessionOptions* opts = TF_NewSessionOptions();
  const unsigned char config[2] = {0x10, 0x02}; /* ConfigProto.intra_op_parallelism_threads = 2 */
  TF_SetConfig(opts, config, sizeof config, s);
  TF_CHECK_OK(s);
  TF_Session* session = TF_NewSession(g, opts, s);
  TF_CHECK_OK(s);
  TF_DeleteSessionOptions(opts);

  const float xs[2] = {2, 3};
  TF_Tensor* out = NULL;
  run_regression(session, g, NULL, xs, 2, &out, s);
  TF_CHECK_OK(s);
  CHECK(out != NULL && TF_TensorType(out) == TF_FLOAT && TF_NumDims(out) == 1 && TF_Dim(out, 0) == 2);
  CHECK_NEAR(tf_float_at(out, 0), regression(2), 1e-6);
  CHECK_NEAR(tf_float_at(out, 1), regression(3), 1e-6);

  /* Targets and fetches together; RunOptions FULL_TRACE (field 1 = 3) and
   * RunMetadata back as bytes. */
  const unsigned char full_trace[2] = {0x08, 0x03};
  TF_Buffer* run_options = TF_NewBufferFromString(full_trace, sizeof full_trace);
  TF_Buffer* metadata = TF_NewBuffer();
  TF_Output in = tf_out(g, "X");
  TF_Output fetches[2] = {tf_out(g, "Mul"), tf_out(g, "pred")};
  const TF_Operation* targets[1] = {TF_GraphOperationByName(g, "Add")};
  const int64_t one = 1;
  const float four = 4;
  TF_Tensor* x = tf_floats(&one, 1, &four, 1);
  TF_Tensor* outs[2] = {NULL, NULL};
  TF_SessionRun(session, run_options, &in, &x, 1, fetches, outs, 2, targets, 1, metadata, s);
  TF_CHECK_OK(s);
  CHECK_NEAR(tf_float_at(outs[0], 0), 4 * REGRESSION_W, 1e-6);
  CHECK_NEAR(tf_float_at(outs[1], 0), regression(4), 1e-6);
  CHECK(metadata->data != NULL && metadata->length > 0); /* step stats */
  TF_DeleteTensor(outs[0]);
  TF_DeleteTensor(outs[1]);
  /* A run_metadata buffer that holds data already is refused. */
  TF_SessionRun(session, NULL, &in, &x, 1, fetches, outs, 1, NULL, 0, metadata, s);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "non-empty TF_Buffer");
  CHECK(outs[0] == NULL);
  TF_DeleteBuffer(metadata);
  TF_DeleteBuffer(run_options);

  /* Outputs are the caller's: they outlive the session and the graph. */
  TF_CloseSession(session, s);
  TF_CHECK_OK(s);
  TF_DeleteSession(session, s);
  TF_CHECK_OK(s);
  TF_DeleteGraph(g);
  CHECK_NEAR(tf_float_at(out, 1), regression(3), 1e-6);
  TF_DeleteTensor(out);
  TF_DeleteTensor(x);
  TF_DeleteStatus(s);
}

/* Operations imported after the session was made are run (the session is
 * extended on its next run), and the graph may be deleted before the
 * session. */
static void test_extend_after_create(void) {
  REQUIRE_TESTDATA(REGRESSION_PB);
  TF_Status* s = TF_NewStatus();
  TF_Graph* g = TF_NewGraph();
  TF_Session* session = TF_NewSession(g, NULL, s); /* on an empty graph */
  TF_CHECK_OK(s);
  /* A run of nothing: TensorFlow's error, after the session was created. */
  TF_SessionRun(session, NULL, NULL, NULL, 0, NULL, NULL, 0, NULL, 0, NULL, s);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "at least one target");
  import_regression(g, NULL, s);
  TF_CHECK_OK(s);
  const float xs[1] = {1};
  TF_Tensor* out = NULL;
  run_regression(session, g, NULL, xs, 1, &out, s);
  TF_CHECK_OK(s);
  CHECK_NEAR(tf_float_at(out, 0), regression(1), 1e-6);
  TF_DeleteTensor(out);
  import_regression(g, "second", s);
  TF_CHECK_OK(s);
  TF_DeleteGraph(g); /* the session keeps it alive */
  const float ys[1] = {10};
  run_regression(session, g, "second", ys, 1, &out, s);
  TF_CHECK_OK(s);
  CHECK_NEAR(tf_float_at(out, 0), regression(10), 1e-5);
  TF_DeleteTensor(out);
  /* Deleted without closing: TF_DeleteSession closes it (and frees g). */
  TF_DeleteSession(session, s);
  TF_CHECK_OK(s);
  TF_DeleteStatus(s);
}

static int dealloc_calls = 0;
static void count_dealloc(void* data, size_t len, void* arg) {
  (void)data, (void)len, (void)arg;
  ++dealloc_calls;
}

/* The deallocator runs exactly once, when the last holder lets go: a fetch
 * of the fed tensor shares its memory, so deleting the input tensor does
 * not free it yet. */
static void test_deallocator_with_graphrt_holding(void) {
  REQUIRE_TESTDATA(REGRESSION_PB);
  TF_Status* s = TF_NewStatus();
  TF_Graph* g = TF_NewGraph();
  import_regression(g, NULL, s);
  TF_Session* session = TF_NewSession(g, NULL, s);
  TF_CHECK_OK(s);
  float* mem = (float*)aligned_alloc(64, 64);
  mem[0] = 7;
  mem[1] = 8;
  const int64_t two = 2;
  TF_Tensor* x = TF_NewTensor(TF_FLOAT, &two, 1, mem, 8, count_dealloc, NULL);
  CHECK(x != NULL && TF_TensorData(x) == mem);
  TF_Output in = tf_out(g, "X");
  TF_Output fetches[2] = {tf_out(g, "X"), tf_out(g, "pred")};
  TF_Tensor* outs[2] = {NULL, NULL};
  TF_SessionRun(session, NULL, &in, &x, 1, fetches, outs, 2, NULL, 0, NULL, s);
  TF_CHECK_OK(s);
  CHECK(outs[0] != NULL && TF_TensorData(outs[0]) == mem); /* the fed tensor itself */
  CHECK_NEAR(tf_float_at(outs[1], 1), regression(8), 1e-6);
  TF_DeleteTensor(x);
  CHECK(dealloc_calls == 0);
  CHECK(tf_float_at(outs[0], 1) == 8.0f);
  TF_DeleteTensor(outs[1]);
  TF_DeleteTensor(outs[0]);
  CHECK(dealloc_calls == 1);
  TF_DeleteSession(session, s);
  TF_DeleteGraph(g);
  CHECK(dealloc_calls == 1);
  free(mem);
  TF_DeleteStatus(s);
}

static void test_run_errors(void) {
  REQUIRE_TESTDATA(REGRESSION_PB);
  TF_Status* s = TF_NewStatus();
  TF_Graph* g = TF_NewGraph();
  import_regression(g, NULL, s);
  TF_Graph* other = TF_NewGraph();
  import_regression(other, "elsewhere", s);
  TF_Session* session = TF_NewSession(g, NULL, s);
  TF_CHECK_OK(s);
  TF_Output in = tf_out(g, "X");
  const int64_t one = 1;
  const float v = 1;
  TF_Tensor* x = tf_floats(&one, 1, &v, 1);
  TF_Tensor* out = (TF_Tensor*)x; /* not NULL: a failed run must clear it */

  /* A fetch of an operation that is not the session graph's. */
  TF_Output foreign = tf_out(other, "elsewhere/pred");
  TF_SessionRun(session, NULL, &in, &x, 1, &foreign, &out, 1, NULL, 0, NULL, s);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "'elsewhere/pred' is not in the session's graph");
  CHECK(out == NULL);
  /* An output index the operation does not have. */
  TF_Output past = {TF_GraphOperationByName(g, "pred"), 1};
  TF_SessionRun(session, NULL, &in, &x, 1, &past, &out, 1, NULL, 0, NULL, s);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "'pred'");
  CHECK(strstr(TF_Message(s), "output 1") != NULL);
  TF_Output null_op = {NULL, 0};
  TF_SessionRun(session, NULL, &in, &x, 1, &null_op, &out, 1, NULL, 0, NULL, s);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "NULL operation");
  /* A target of another graph. */
  TF_Output pred = tf_out(g, "pred");
  const TF_Operation* bad_target[1] = {TF_GraphOperationByName(other, "elsewhere/Add")};
  TF_SessionRun(session, NULL, &in, &x, 1, &pred, &out, 1, bad_target, 1, NULL, s);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "'elsewhere/Add'");

  /* A feed of the wrong dtype: X is float. */
  TF_Tensor* ints = TF_AllocateTensor(TF_INT32, &one, 1, 4);
  TF_SessionRun(session, NULL, &in, &ints, 1, &pred, &out, 1, NULL, 0, NULL, s);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "'X:0'");
  CHECK(strstr(TF_Message(s), "int32") != NULL && out == NULL);
  TF_DeleteTensor(ints);
  /* A missing feed: the session's error names the placeholder. */
  TF_SessionRun(session, NULL, NULL, NULL, 0, &pred, &out, 1, NULL, 0, NULL, s);
  CHECK(TF_GetCode(s) == TF_INVALID_ARGUMENT && strstr(TF_Message(s), "X") != NULL);
  /* Bad run options, NULL arrays. */
  const char garbage[3] = {0x0a, 0x7f, 'a'};
  TF_Buffer* bad_options = TF_NewBufferFromString(garbage, sizeof garbage);
  TF_SessionRun(session, bad_options, &in, &x, 1, &pred, &out, 1, NULL, 0, NULL, s);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "run_options");
  TF_DeleteBuffer(bad_options);
  TF_SessionRun(session, NULL, &in, &x, 1, &pred, NULL, 1, NULL, 0, NULL, s);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "outputs is NULL");
  TF_SessionRun(NULL, NULL, &in, &x, 1, &pred, &out, 1, NULL, 0, NULL, s);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "session is NULL");

  /* The session still works after all that. */
  TF_SessionRun(session, NULL, &in, &x, 1, &pred, &out, 1, NULL, 0, NULL, s);
  TF_CHECK_OK(s);
  CHECK_NEAR(tf_float_at(out, 0), regression(1), 1e-6);
  TF_DeleteTensor(out);

  /* Closed: runs fail (TensorFlow: CANCELLED "Session has been closed."). */
  TF_CloseSession(session, s);
  TF_CHECK_OK(s);
  TF_SessionRun(session, NULL, &in, &x, 1, &pred, &out, 1, NULL, 0, NULL, s);
  TF_CHECK_ERROR(s, TF_CANCELLED, "closed");
  CHECK(out == NULL);
  TF_DeleteSession(session, s);
  TF_CHECK_OK(s);

  /* Options: ConfigProto bytes that are not one; an unknown target. */
  TF_SessionOptions* opts = TF_NewSessionOptions();
  TF_SetConfig(opts, garbage, sizeof garbage, s);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "ConfigProto");
  TF_SetTarget(opts, "nosuchproto://host:1");
  CHECK(TF_NewSession(g, opts, s) == NULL);
  CHECK(TF_GetCode(s) != TF_OK && strstr(TF_Message(s), "nosuchproto://host:1") != NULL);
  TF_DeleteSessionOptions(opts);
  CHECK(TF_NewSession(NULL, NULL, s) == NULL);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "graph is NULL");
  TF_DeleteSession(NULL, s);
  TF_CHECK_OK(s);

  TF_DeleteTensor(x);
  TF_DeleteGraph(other);
  TF_DeleteGraph(g);
  TF_DeleteStatus(s);
}

int main(void) {
  test_run();
  test_extend_after_create();
  test_deallocator_with_graphrt_holding();
  test_run_errors();
  if (c_test_failures() == 0) printf("all TF C API session checks passed\n");
  return c_test_exit();
}
