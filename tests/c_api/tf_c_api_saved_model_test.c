/* TensorFlow's C API names: TF_LoadSessionFromSavedModel on TensorFlow
 * Serving's half_plus_two and counter (tf_testdata README items 2 and 4),
 * and its error paths. Compiled as C11. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "tf_test_util.h"

#define HALF_PLUS_TWO "serving/saved_model_half_plus_two_cpu/00000123"
#define COUNTER "serving/saved_model_counter/00000123"

static int count_operations(TF_Graph* g) {
  size_t pos = 0;
  int n = 0;
  while (TF_GraphNextOperation(g, &pos) != NULL) ++n;
  return n;
}

static int buffer_contains(const TF_Buffer* b, const char* str) {
  const size_t n = strlen(str);
  for (size_t i = 0; i + n <= b->length; ++i)
    if (memcmp((const char*)b->data + i, str, n) == 0) return 1;
  return 0;
}

static void test_half_plus_two(void) {
  REQUIRE_TESTDATA(HALF_PLUS_TWO "/saved_model.pb");
  TF_Status* s = TF_NewStatus();
  TF_Graph* g = TF_NewGraph();
  TF_SessionOptions* opts = TF_NewSessionOptions();
  TF_Buffer* meta = TF_NewBuffer();
  const char* tags[1] = {"serve"};
  TF_Session* session = TF_LoadSessionFromSavedModel(opts, NULL, testdata(HALF_PLUS_TWO), tags, 1, g, meta, s);
  TF_CHECK_OK(s);
  TF_DeleteSessionOptions(opts);
  if (session == NULL) {
    TF_DeleteBuffer(meta);
    TF_DeleteGraph(g);
    TF_DeleteStatus(s);
    return;
  }
  /* The MetaGraphDef came back as bytes (its signature keys among them),
   * and the graph holds its nodes. */
  CHECK(meta->data != NULL && meta->length > 0);
  CHECK(buffer_contains(meta, "serving_default") && buffer_contains(meta, "tensorflow/serving/predict"));
  CHECK(count_operations(g) > 0);
  TF_Operation* a = TF_GraphOperationByName(g, "a");
  CHECK(a != NULL && strcmp(TF_OperationOpType(a), "VariableV2") == 0);
  TF_Output a0 = {a, 0};
  CHECK(TF_OperationOutputType(a0) == 101); /* float_ref: TF_FLOAT + 100 */

  /* y = 0.5x + 2 and y2 = 0.5x + 3 from the restored variables. */
  const int64_t dims[2] = {3, 1};
  const float xs[3] = {1, 2, 5};
  TF_Tensor* x = tf_floats(dims, 2, xs, 3);
  TF_Output in = tf_out(g, "x");
  TF_Output fetches[2] = {tf_out(g, "y"), tf_out(g, "y2")};
  TF_Tensor* outs[2] = {NULL, NULL};
  TF_SessionRun(session, NULL, &in, &x, 1, fetches, outs, 2, NULL, 0, NULL, s);
  TF_CHECK_OK(s);
  CHECK(TF_NumDims(outs[0]) == 2 && TF_Dim(outs[0], 0) == 3 && TF_Dim(outs[0], 1) == 1);
  CHECK_NEAR(tf_float_at(outs[0], 0), 2.5, 1e-6);
  CHECK_NEAR(tf_float_at(outs[0], 1), 3.0, 1e-6);
  CHECK_NEAR(tf_float_at(outs[0], 2), 4.5, 1e-6);
  CHECK_NEAR(tf_float_at(outs[1], 0), 3.5, 1e-6);
  CHECK_NEAR(tf_float_at(outs[1], 2), 5.5, 1e-6);
  TF_DeleteTensor(outs[0]);
  TF_DeleteTensor(outs[1]);

  /* Loading into a graph that is not empty is refused. */
  TF_Session* again = TF_LoadSessionFromSavedModel(NULL, NULL, testdata(HALF_PLUS_TWO), tags, 1, g, NULL, s);
  CHECK(again == NULL);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "graph must be empty");

  TF_DeleteTensor(x);
  TF_CloseSession(session, s);
  TF_CHECK_OK(s);
  TF_DeleteSession(session, s);
  TF_CHECK_OK(s);
  TF_DeleteGraph(g);
  TF_DeleteBuffer(meta);
  TF_DeleteStatus(s);
}

/* The counter's variable lives in the session: its assign ops run as
 * targets and fetches, and a graph import after loading extends it. */
static void test_counter(void) {
  REQUIRE_TESTDATA(COUNTER "/saved_model.pb");
  REQUIRE_TESTDATA(REGRESSION_PB);
  TF_Status* s = TF_NewStatus();
  TF_Graph* g = TF_NewGraph();
  const char* tags[1] = {"serve"};
  const unsigned char no_trace[2] = {0x08, 0x00}; /* RunOptions.trace_level = NO_TRACE */
  TF_Buffer* run_options = TF_NewBufferFromString(no_trace, sizeof no_trace);
  TF_Session* session = TF_LoadSessionFromSavedModel(NULL, run_options, testdata(COUNTER), tags, 1, g, NULL, s);
  TF_CHECK_OK(s);
  TF_DeleteBuffer(run_options);
  if (session == NULL) {
    TF_DeleteGraph(g);
    TF_DeleteStatus(s);
    return;
  }
  TF_Output incr = tf_out(g, "incr_counter_op/AssignAdd");
  TF_Output counter = tf_out(g, "counter");
  TF_Tensor* out = NULL;
  for (int i = 1; i <= 3; ++i) {
    TF_SessionRun(session, NULL, NULL, NULL, 0, &incr, &out, 1, NULL, 0, NULL, s);
    TF_CHECK_OK(s);
    CHECK_NEAR(tf_float_at(out, 0), (double)i, 0);
    TF_DeleteTensor(out);
  }
  const TF_Operation* reset[1] = {TF_GraphOperationByName(g, "reset_counter_op/Assign")};
  CHECK(reset[0] != NULL);
  TF_SessionRun(session, NULL, NULL, NULL, 0, NULL, NULL, 0, reset, 1, NULL, s);
  TF_CHECK_OK(s);
  TF_SessionRun(session, NULL, NULL, NULL, 0, &counter, &out, 1, NULL, 0, NULL, s);
  TF_CHECK_OK(s);
  CHECK_NEAR(tf_float_at(out, 0), 0.0, 0);
  TF_DeleteTensor(out);

  /* More operations imported into the loaded graph: the session runs them. */
  import_regression(g, "extra", s);
  TF_CHECK_OK(s);
  const int64_t one = 1;
  const float v = 2;
  TF_Tensor* x = tf_floats(&one, 1, &v, 1);
  TF_Output in = tf_out(g, "extra/X");
  TF_Output pred = tf_out(g, "extra/pred");
  TF_SessionRun(session, NULL, &in, &x, 1, &pred, &out, 1, NULL, 0, NULL, s);
  TF_CHECK_OK(s);
  CHECK_NEAR(tf_float_at(out, 0), 2 * REGRESSION_W + REGRESSION_B, 1e-6);
  TF_DeleteTensor(out);
  TF_DeleteTensor(x);
  TF_DeleteGraph(g); /* before the session: freed with it */
  TF_DeleteSession(session, s);
  TF_CHECK_OK(s);
  TF_DeleteStatus(s);
}

static void test_load_errors(void) {
  REQUIRE_TESTDATA(HALF_PLUS_TWO "/saved_model.pb");
  TF_Status* s = TF_NewStatus();
  TF_Graph* g = TF_NewGraph();
  const char* tags[1] = {"serve"};
  CHECK(TF_LoadSessionFromSavedModel(NULL, NULL, "/nonexistent/saved_model_dir", tags, 1, g, NULL, s) == NULL);
  TF_CHECK_ERROR(s, TF_NOT_FOUND, "/nonexistent/saved_model_dir");
  const char* wrong[1] = {"no_such_tag"};
  CHECK(TF_LoadSessionFromSavedModel(NULL, NULL, testdata(HALF_PLUS_TWO), wrong, 1, g, NULL, s) == NULL);
  TF_CHECK_ERROR(s, TF_NOT_FOUND, "no_such_tag");
  CHECK(count_operations(g) == 0); /* failures leave the graph empty */
  const char* null_tag[1] = {NULL};
  CHECK(TF_LoadSessionFromSavedModel(NULL, NULL, testdata(HALF_PLUS_TWO), null_tag, 1, g, NULL, s) == NULL);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "tags[0] is NULL");
  CHECK(TF_LoadSessionFromSavedModel(NULL, NULL, NULL, tags, 1, g, NULL, s) == NULL);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "export_dir is NULL");
  CHECK(TF_LoadSessionFromSavedModel(NULL, NULL, testdata(HALF_PLUS_TWO), tags, 1, NULL, NULL, s) == NULL);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "graph is NULL");
  /* A meta_graph_def buffer holding data already. */
  TF_Buffer* full = TF_NewBufferFromString("x", 1);
  CHECK(TF_LoadSessionFromSavedModel(NULL, NULL, testdata(HALF_PLUS_TWO), tags, 1, g, full, s) == NULL);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "non-empty TF_Buffer");
  CHECK(count_operations(g) == 0);
  TF_DeleteBuffer(full);
  TF_DeleteGraph(g);
  TF_DeleteStatus(s);
}

int main(void) {
  test_half_plus_two();
  test_counter();
  test_load_errors();
  if (c_test_failures() == 0) printf("all TF C API SavedModel checks passed\n");
  return c_test_exit();
}
