/* TensorFlow's C API names: graph import (prefix, default device, all or
 * nothing), operation lookup and inspection, TF_GraphToGraphDef, and
 * TF_LoadLibrary. Compiled as C11. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tf_test_util.h"

static const char* const kRegressionNodes[8] = {"X", "W", "W/read", "b", "b/read", "Mul", "Add", "pred"};

static int count_operations(TF_Graph* g) {
  size_t pos = 0;
  int n = 0;
  while (TF_GraphNextOperation(g, &pos) != NULL) ++n;
  return n;
}

static void test_import_and_lookup(void) {
  REQUIRE_TESTDATA(REGRESSION_PB);
  TF_Status* s = TF_NewStatus();
  TF_Graph* g = TF_NewGraph();
  CHECK(count_operations(g) == 0);
  import_regression(g, NULL, s);
  TF_CHECK_OK(s);

  /* Operations in the GraphDef's order. */
  size_t pos = 0;
  for (int i = 0; i < 8; ++i) {
    TF_Operation* op = TF_GraphNextOperation(g, &pos);
    CHECK(op != NULL && strcmp(TF_OperationName(op), kRegressionNodes[i]) == 0);
  }
  CHECK(TF_GraphNextOperation(g, &pos) == NULL && pos == 8);

  TF_Operation* x = TF_GraphOperationByName(g, "X");
  CHECK(x != NULL && strcmp(TF_OperationOpType(x), "Placeholder") == 0);
  CHECK(TF_OperationNumInputs(x) == 0 && TF_OperationNumOutputs(x) == 1);
  CHECK(strcmp(TF_OperationDevice(x), "") == 0);
  TF_Output x0 = {x, 0};
  CHECK(TF_OperationOutputType(x0) == TF_FLOAT);
  TF_Output x1 = {x, 1};
  CHECK(TF_OperationOutputType(x1) == 0); /* no output 1 */
  TF_Operation* mul = TF_GraphOperationByName(g, "Mul");
  CHECK(mul != NULL && strcmp(TF_OperationOpType(mul), "Mul") == 0 && TF_OperationNumInputs(mul) == 2);
  CHECK(TF_GraphOperationByName(g, "W/read") != NULL);
  CHECK(TF_GraphOperationByName(g, "no_such_op") == NULL);
  CHECK(TF_GraphOperationByName(g, NULL) == NULL);

  /* The same graph again under a prefix: inputs renamed with it. */
  TF_ImportGraphDefOptions* opts = TF_NewImportGraphDefOptions();
  TF_ImportGraphDefOptionsSetPrefix(opts, "copy");
  TF_ImportGraphDefOptionsSetDefaultDevice(opts, "/device:CPU:0");
  TF_Buffer* def = read_buffer(testdata(REGRESSION_PB));
  TF_GraphImportGraphDef(g, def, opts, s);
  TF_CHECK_OK(s);
  CHECK(count_operations(g) == 16);
  TF_Operation* copy_mul = TF_GraphOperationByName(g, "copy/Mul");
  CHECK(copy_mul != NULL && TF_OperationNumInputs(copy_mul) == 2 && copy_mul != mul);
  CHECK(strcmp(TF_OperationDevice(copy_mul), "/device:CPU:0") == 0);
  CHECK(TF_GraphOperationByName(g, "X") == x); /* earlier operations stay */

  /* A name that exists: refused, the graph unchanged. */
  TF_GraphImportGraphDef(g, def, NULL, s);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "'X' already exists");
  CHECK(count_operations(g) == 16);
  TF_DeleteImportGraphDefOptions(opts);
  TF_DeleteBuffer(def);

  /* TF_GraphToGraphDef round-trips through a fresh graph. */
  TF_Buffer* out = TF_NewBuffer();
  TF_GraphToGraphDef(g, out, s);
  TF_CHECK_OK(s);
  CHECK(out->data != NULL && out->length > 0 && out->data_deallocator != NULL);
  TF_Graph* g2 = TF_NewGraph();
  TF_GraphImportGraphDef(g2, out, NULL, s);
  TF_CHECK_OK(s);
  CHECK(count_operations(g2) == 16);
  TF_Operation* g2_mul = TF_GraphOperationByName(g2, "copy/Mul");
  CHECK(g2_mul != NULL && strcmp(TF_OperationDevice(g2_mul), "/device:CPU:0") == 0);
  /* A buffer that holds data already is refused. */
  TF_GraphToGraphDef(g, out, s);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "non-empty TF_Buffer");
  TF_DeleteBuffer(out);
  TF_DeleteGraph(g2);
  TF_DeleteGraph(g);
  TF_DeleteStatus(s);
}

static void test_import_errors(void) {
  REQUIRE_TESTDATA(REGRESSION_PB);
  TF_Status* s = TF_NewStatus();
  TF_Graph* g = TF_NewGraph();
  /* Not a GraphDef: a truncated length-delimited field. */
  const char garbage[4] = {0x0a, 0x7f, 'a', 'b'};
  TF_Buffer* bad = TF_NewBufferFromString(garbage, sizeof garbage);
  TF_GraphImportGraphDef(g, bad, NULL, s);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "not a serialized");
  CHECK(count_operations(g) == 0);
  TF_DeleteBuffer(bad);

  /* node { name: "u" op: "NoSuchOp" }, by hand: field 1 (node) holding
   * NodeDef fields 1 (name) and 2 (op). */
  const char unknown_op[15] = {0x0a, 0x0d, 0x0a, 0x01, 'u', 0x12, 0x08, 'N', 'o', 'S', 'u', 'c', 'h', 'O', 'p'};
  TF_Buffer* unknown = TF_NewBufferFromString(unknown_op, sizeof unknown_op);
  import_regression(g, NULL, s);
  TF_CHECK_OK(s);
  TF_GraphImportGraphDef(g, unknown, NULL, s);
  CHECK(TF_GetCode(s) != TF_OK && strstr(TF_Message(s), "NoSuchOp") != NULL);
  CHECK(count_operations(g) == 8 && TF_GraphOperationByName(g, "u") == NULL);
  TF_DeleteBuffer(unknown);

  /* NULL arguments. */
  TF_GraphImportGraphDef(g, NULL, NULL, s);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "graph_def is NULL");
  TF_GraphImportGraphDef(NULL, NULL, NULL, s);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "graph is NULL");
  TF_GraphToGraphDef(g, NULL, s);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "output_graph_def is NULL");
  TF_DeleteGraph(g);
  TF_DeleteGraph(NULL);
  TF_DeleteStatus(s);
}

/* Does buf hold the bytes of str? */
static int contains(TF_Buffer b, const char* str) {
  const size_t n = strlen(str);
  for (size_t i = 0; i + n <= b.length; ++i)
    if (memcmp((const char*)b.data + i, str, n) == 0) return 1;
  return 0;
}

static void test_load_library(void) {
  TF_Status* s = TF_NewStatus();
  /* The array family's plugin (already loaded as a standard plugin by an
   * import above, or loaded now): its OpDefs come back as an OpList. */
  TF_Library* lib = TF_LoadLibrary(GRAPHRT_ARRAY_PLUGIN, s);
  TF_CHECK_OK(s);
  TF_Buffer ops = TF_GetOpList(lib);
  CHECK(ops.length > 0 && ops.data != NULL);
  CHECK(contains(ops, "ExpandDims") && contains(ops, "ConcatV2"));
  CHECK(!contains(ops, "MatMul")); /* the math family's */
  TF_DeleteLibraryHandle(lib);

  CHECK(TF_LoadLibrary("/nonexistent/libops.so", s) == NULL);
  TF_CHECK_ERROR(s, TF_NOT_FOUND, "/nonexistent/libops.so");
  CHECK(TF_LoadLibrary(NULL, s) == NULL);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "library_filename is NULL");
  TF_Buffer none = TF_GetOpList(NULL);
  CHECK(none.data == NULL && none.length == 0);
  TF_DeleteLibraryHandle(NULL);
  TF_DeleteStatus(s);
}

int main(void) {
  test_import_and_lookup();
  test_import_errors();
  test_load_library();
  if (c_test_failures() == 0) printf("all TF C API graph checks passed\n");
  return c_test_exit();
}
