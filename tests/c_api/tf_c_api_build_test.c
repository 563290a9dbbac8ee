/* TensorFlow's C API names: graphs built operation by operation
 * (TF_NewOperation ... TF_FinishOperation) with attr inference, defaults,
 * input lists and the ops' shape functions; tensor shapes; operation
 * inspection (inputs, consumers, control edges, NodeDefs, attrs); OpDefs;
 * error paths; sessions on a growing graph. Every expected value is
 * computed by hand here or follows TensorFlow 1.15's documented C API.
 * Needs no tf_testdata. Compiled as C11. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tf_test_util.h"

/* As CHECK, but leaves the test function (whose later steps need it). */
#define REQUIRE(cond)                                                              \
  do {                                                                             \
    if (!(cond)) {                                                                 \
      fprintf(stderr, "%s:%d: REQUIRE failed: %s\n", __FILE__, __LINE__, #cond);   \
      ++c_test_failures_;                                                          \
      return;                                                                      \
    }                                                                              \
  } while (0)

/* The status failed with `code` and its message names both parts. */
#define TF_CHECK_ERROR2(status, code, part1, part2)                 \
  do {                                                              \
    TF_CHECK_ERROR(status, code, part1);                            \
    if (strstr(TF_Message(status), (part2)) == NULL) {              \
      fprintf(stderr, "%s:%d: message lacks \"%s\": %s\n", __FILE__, \
              __LINE__, (part2), TF_Message(status));               \
      ++c_test_failures_;                                           \
    }                                                               \
  } while (0)

static TF_Output out_at(TF_Operation* op, int index) {
  TF_Output o = {op, index};
  return o;
}

static TF_Output out0(TF_Operation* op) { return out_at(op, 0); }

static TF_Input in_at(TF_Operation* op, int index) {
  TF_Input i = {op, index};
  return i;
}

static int count_operations(TF_Graph* g) {
  size_t pos = 0;
  int n = 0;
  while (TF_GraphNextOperation(g, &pos) != NULL) ++n;
  return n;
}

/* A Placeholder; num_dims == -2 leaves its shape attr unset. */
static TF_Operation* placeholder(TF_Graph* g, const char* name, TF_DataType dtype, const int64_t* dims,
                                 int num_dims, TF_Status* s) {
  TF_OperationDescription* d = TF_NewOperation(g, "Placeholder", name);
  TF_SetAttrType(d, "dtype", dtype);
  if (num_dims != -2) TF_SetAttrShape(d, "shape", dims, num_dims);
  return TF_FinishOperation(d, s);
}

/* A Const holding `t` (which stays the caller's, TensorFlow 1.15's rule). */
static TF_Operation* const_tensor(TF_Graph* g, const char* name, TF_Tensor* t, TF_Status* s) {
  TF_OperationDescription* d = TF_NewOperation(g, "Const", name);
  TF_SetAttrTensor(d, "value", t, s);
  TF_CHECK_OK(s);
  TF_SetAttrType(d, "dtype", TF_TensorType(t));
  return TF_FinishOperation(d, s);
}

static TF_Operation* const_floats(TF_Graph* g, const char* name, const int64_t* dims, int num_dims,
                                  const float* values, size_t n, TF_Status* s) {
  TF_Tensor* t = tf_floats(dims, num_dims, values, n);
  TF_Operation* op = const_tensor(g, name, t, s);
  TF_DeleteTensor(t);
  return op;
}

static TF_Tensor* tf_ints(const int64_t* dims, int num_dims, const int32_t* values, size_t n) {
  TF_Tensor* t = TF_AllocateTensor(TF_INT32, dims, num_dims, n * sizeof(int32_t));
  CHECK(t != NULL);
  if (t != NULL && n > 0) memcpy(TF_TensorData(t), values, n * sizeof(int32_t));
  return t;
}

static TF_Operation* const_ints(TF_Graph* g, const char* name, const int64_t* dims, int num_dims,
                                const int32_t* values, size_t n, TF_Status* s) {
  TF_Tensor* t = tf_ints(dims, num_dims, values, n);
  TF_Operation* op = const_tensor(g, name, t, s);
  TF_DeleteTensor(t);
  return op;
}

static TF_Operation* unary(TF_Graph* g, const char* type, const char* name, TF_Output x, TF_Status* s) {
  TF_OperationDescription* d = TF_NewOperation(g, type, name);
  TF_AddInput(d, x);
  return TF_FinishOperation(d, s);
}

static TF_Operation* binary(TF_Graph* g, const char* type, const char* name, TF_Output x, TF_Output y,
                            TF_Status* s) {
  TF_OperationDescription* d = TF_NewOperation(g, type, name);
  TF_AddInput(d, x);
  TF_AddInput(d, y);
  return TF_FinishOperation(d, s);
}

/* Whether t is a float tensor of n elements equal to want (printing the
 * difference otherwise). */
static int floats_are(const TF_Tensor* t, const float* want, int64_t n) {
  if (t == NULL || TF_TensorType(t) != TF_FLOAT || TF_TensorElementCount(t) != n) {
    fprintf(stderr, "  tensor %p is not %lld floats\n", (const void*)t, (long long)n);
    return 0;
  }
  int ok = 1;
  for (int64_t i = 0; i < n; ++i) {
    const float got = tf_float_at(t, i);
    if (!(fabs((double)got - (double)want[i]) <= 1e-5 * (1 + fabs((double)want[i])))) {
      fprintf(stderr, "  element %lld: %.9g, expected %.9g\n", (long long)i, (double)got, (double)want[i]);
      ok = 0;
    }
  }
  return ok;
}

/* Whether t has exactly the dims given. */
static int dims_are(const TF_Tensor* t, const int64_t* dims, int num_dims) {
  if (t == NULL || TF_NumDims(t) != num_dims) return 0;
  for (int i = 0; i < num_dims; ++i)
    if (TF_Dim(t, i) != dims[i]) return 0;
  return 1;
}

/* Whether the graph's inferred shape of o is dims[0, num_dims)
 * (num_dims -1: unknown rank). */
static int shape_is(TF_Graph* g, TF_Output o, const int64_t* dims, int num_dims) {
  TF_Status* s = TF_NewStatus();
  int ok = 1;
  const int rank = TF_GraphGetTensorNumDims(g, o, s);
  if (TF_GetCode(s) != TF_OK || rank != num_dims) {
    fprintf(stderr, "  rank %d (%s), expected %d\n", rank, TF_Message(s), num_dims);
    ok = 0;
  } else if (rank > 0) {
    int64_t got[8] = {0};
    TF_GraphGetTensorShape(g, o, got, rank, s);
    if (TF_GetCode(s) != TF_OK) {
      fprintf(stderr, "  TF_GraphGetTensorShape: %s\n", TF_Message(s));
      ok = 0;
    }
    for (int i = 0; i < rank && ok; ++i) {
      if (got[i] != dims[i]) {
        fprintf(stderr, "  dim %d: %lld, expected %lld\n", i, (long long)got[i], (long long)dims[i]);
        ok = 0;
      }
    }
  }
  TF_DeleteStatus(s);
  return ok;
}

/* Does the buffer hold the bytes of str? */
static int buffer_contains(const TF_Buffer* b, const char* str) {
  const size_t n = strlen(str);
  if (b == NULL || b->data == NULL) return 0;
  for (size_t i = 0; i + n <= b->length; ++i)
    if (memcmp((const char*)b->data + i, str, n) == 0) return 1;
  return 0;
}

/* Runs one fetch with the given feeds; the caller owns the result. */
static TF_Tensor* run1(TF_Session* session, const TF_Output* inputs, TF_Tensor* const* values, int ninputs,
                       TF_Output fetch, TF_Status* s) {
  TF_Tensor* out = NULL;
  TF_SessionRun(session, NULL, inputs, values, ninputs, &fetch, &out, 1, NULL, 0, NULL, s);
  return out;
}

/* 1. x (placeholder [2,2]) times w^T (Const), plus w, through Identity;
 * T inferred, defaults filled, run through a session. */
static void test_build_and_run(void) {
  TF_Status* s = TF_NewStatus();
  TF_Graph* g = TF_NewGraph();
  const int64_t dims22[2] = {2, 2};
  TF_Operation* x = placeholder(g, "x", TF_FLOAT, dims22, 2, s);
  TF_CHECK_OK(s);
  const float wv[4] = {5, 6, 7, 8};
  TF_Operation* w = const_floats(g, "w", dims22, 2, wv, 4, s);
  TF_CHECK_OK(s);
  REQUIRE(x != NULL && w != NULL);
  CHECK(strcmp(TF_OperationName(x), "x") == 0 && strcmp(TF_OperationOpType(x), "Placeholder") == 0);
  CHECK(TF_OperationNumInputs(x) == 0 && TF_OperationNumOutputs(x) == 1);
  CHECK(TF_OperationOutputType(out0(x)) == TF_FLOAT && TF_OperationOutputType(out0(w)) == TF_FLOAT);
  CHECK(strcmp(TF_OperationDevice(x), "") == 0);
  CHECK(TF_GraphOperationByName(g, "x") == x && TF_GraphOperationByName(g, "w") == w);

  TF_OperationDescription* d = TF_NewOperation(g, "MatMul", "mm");
  TF_AddInput(d, out0(x));
  TF_AddInput(d, out0(w));
  TF_SetAttrBool(d, "transpose_b", 1);
  TF_Operation* mm = TF_FinishOperation(d, s);
  TF_CHECK_OK(s);
  REQUIRE(mm != NULL);
  CHECK(strcmp(TF_OperationName(mm), "mm") == 0 && strcmp(TF_OperationOpType(mm), "MatMul") == 0);
  CHECK(TF_OperationNumInputs(mm) == 2 && TF_OperationNumOutputs(mm) == 1);
  CHECK(TF_OperationOutputType(out0(mm)) == TF_FLOAT);
  TF_DataType type = TF_DOUBLE;
  TF_OperationGetAttrType(mm, "T", &type, s); /* inferred from the inputs */
  TF_CHECK_OK(s);
  CHECK(type == TF_FLOAT);
  unsigned char flag = 7;
  TF_OperationGetAttrBool(mm, "transpose_a", &flag, s); /* the OpDef's default */
  TF_CHECK_OK(s);
  CHECK(flag == 0);
  flag = 7;
  TF_OperationGetAttrBool(mm, "transpose_b", &flag, s);
  TF_CHECK_OK(s);
  CHECK(flag == 1);
  CHECK(shape_is(g, out0(mm), dims22, 2));
  /* The attrs set on the inputs read back. */
  TF_OperationGetAttrType(w, "dtype", &type, s);
  TF_CHECK_OK(s);
  CHECK(type == TF_FLOAT);
  int64_t shape[2] = {0, 0};
  TF_OperationGetAttrShape(x, "shape", shape, 2, s);
  TF_CHECK_OK(s);
  CHECK(shape[0] == 2 && shape[1] == 2);
  CHECK(shape_is(g, out0(x), dims22, 2));

  TF_Operation* sum = binary(g, "Add", "sum", out0(mm), out0(w), s);
  TF_CHECK_OK(s);
  TF_Operation* result = unary(g, "Identity", "result", out0(sum), s);
  TF_CHECK_OK(s);
  REQUIRE(sum != NULL && result != NULL);
  CHECK(shape_is(g, out0(result), dims22, 2));
  /* Operations in creation order. */
  const char* const names[5] = {"x", "w", "mm", "sum", "result"};
  size_t pos = 0;
  for (int i = 0; i < 5; ++i) {
    TF_Operation* op = TF_GraphNextOperation(g, &pos);
    CHECK(op != NULL && strcmp(TF_OperationName(op), names[i]) == 0);
  }
  CHECK(TF_GraphNextOperation(g, &pos) == NULL);

  TF_Session* session = TF_NewSession(g, NULL, s);
  TF_CHECK_OK(s);
  REQUIRE(session != NULL);
  const float xv[4] = {1, 2, 3, 4};
  TF_Tensor* xt = tf_floats(dims22, 2, xv, 4);
  TF_Output feed = out0(x);
  TF_Output fetches[2] = {out0(mm), out0(result)};
  TF_Tensor* outs[2] = {NULL, NULL};
  TF_SessionRun(session, NULL, &feed, &xt, 1, fetches, outs, 2, NULL, 0, NULL, s);
  TF_CHECK_OK(s);
  /* x w^T = [[1*5+2*6, 1*7+2*8], [3*5+4*6, 3*7+4*8]]; then + w. */
  const float want_mm[4] = {17, 23, 39, 53};
  const float want_result[4] = {22, 29, 46, 61};
  CHECK(floats_are(outs[0], want_mm, 4) && dims_are(outs[0], dims22, 2));
  CHECK(floats_are(outs[1], want_result, 4) && dims_are(outs[1], dims22, 2));
  TF_DeleteTensor(outs[0]);
  TF_DeleteTensor(outs[1]);
  TF_DeleteTensor(xt);
  TF_DeleteSession(session, s);
  TF_CHECK_OK(s);
  TF_DeleteGraph(g);
  TF_DeleteStatus(s);
}

/* 2. Input lists: ConcatV2 and AddN (N * T), IdentityN (a type list). */
static void test_lists(void) {
  TF_Status* s = TF_NewStatus();
  TF_Graph* g = TF_NewGraph();
  const int64_t dims22[2] = {2, 2}, dims21[2] = {2, 1};
  const float av[4] = {1, 2, 3, 4}, bv[2] = {5, 6};
  TF_Operation* a = const_floats(g, "a", dims22, 2, av, 4, s);
  TF_Operation* b = const_floats(g, "b", dims21, 2, bv, 2, s);
  const int32_t one = 1;
  TF_Operation* axis = const_ints(g, "axis", NULL, 0, &one, 1, s);
  TF_CHECK_OK(s);
  REQUIRE(a != NULL && b != NULL && axis != NULL);

  TF_OperationDescription* d = TF_NewOperation(g, "ConcatV2", "cat");
  const TF_Output values[2] = {out0(a), out0(b)};
  TF_AddInputList(d, values, 2);
  TF_AddInput(d, out0(axis));
  TF_Operation* cat = TF_FinishOperation(d, s);
  TF_CHECK_OK(s);
  REQUIRE(cat != NULL);
  CHECK(TF_OperationNumInputs(cat) == 3 && TF_OperationNumOutputs(cat) == 1);
  int64_t n = 0;
  TF_OperationGetAttrInt(cat, "N", &n, s);
  TF_CHECK_OK(s);
  CHECK(n == 2);
  TF_DataType type = TF_DOUBLE;
  TF_OperationGetAttrType(cat, "T", &type, s);
  TF_CHECK_OK(s);
  CHECK(type == TF_FLOAT);
  TF_OperationGetAttrType(cat, "Tidx", &type, s);
  TF_CHECK_OK(s);
  CHECK(type == TF_INT32);
  CHECK(TF_OperationInputListLength(cat, "values", s) == 2);
  TF_CHECK_OK(s);
  CHECK(TF_OperationInputListLength(cat, "axis", s) == 1);
  TF_CHECK_OK(s);
  CHECK(TF_OperationOutputListLength(cat, "output", s) == 1);
  TF_CHECK_OK(s);
  TF_OperationInputListLength(cat, "no_such_arg", s);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "no_such_arg");
  CHECK(TF_OperationInputType(in_at(cat, 2)) == TF_INT32);
  TF_Output src = TF_OperationInput(in_at(cat, 1));
  CHECK(src.oper == b && src.index == 0);
  /* [2,2] ++ [2,1] along axis 1 (a Const the shape function reads). */
  const int64_t dims23[2] = {2, 3};
  CHECK(shape_is(g, out0(cat), dims23, 2));

  /* AddN of three. */
  const int64_t two = 2;
  const float v1[2] = {1, 2}, v2[2] = {10, 20}, v3[2] = {100, 200};
  TF_Operation* c1 = const_floats(g, "c1", &two, 1, v1, 2, s);
  TF_Operation* c2 = const_floats(g, "c2", &two, 1, v2, 2, s);
  TF_Operation* c3 = const_floats(g, "c3", &two, 1, v3, 2, s);
  TF_CHECK_OK(s);
  REQUIRE(c1 != NULL && c2 != NULL && c3 != NULL);
  d = TF_NewOperation(g, "AddN", "addn");
  const TF_Output terms[3] = {out0(c1), out0(c2), out0(c3)};
  TF_AddInputList(d, terms, 3);
  TF_Operation* addn = TF_FinishOperation(d, s);
  TF_CHECK_OK(s);
  REQUIRE(addn != NULL);
  TF_OperationGetAttrInt(addn, "N", &n, s);
  TF_CHECK_OK(s);
  CHECK(n == 3);
  CHECK(TF_OperationInputListLength(addn, "inputs", s) == 3);
  TF_CHECK_OK(s);
  CHECK(TF_OperationNumInputs(addn) == 3);
  CHECK(shape_is(g, out0(addn), &two, 1));
  TF_Output all[3];
  TF_OperationAllInputs(addn, all, 3);
  CHECK(all[0].oper == c1 && all[1].oper == c2 && all[2].oper == c3);
  CHECK(all[0].index == 0 && all[1].index == 0 && all[2].index == 0);

  /* IdentityN over a float and an int32 tensor: T = {float, int32}. */
  const int64_t three = 3;
  const int32_t iv[3] = {7, 8, 9};
  TF_Operation* ints = const_ints(g, "ints", &three, 1, iv, 3, s);
  TF_CHECK_OK(s);
  REQUIRE(ints != NULL);
  d = TF_NewOperation(g, "IdentityN", "idn");
  const TF_Output mixed[2] = {out0(c1), out0(ints)};
  TF_AddInputList(d, mixed, 2);
  TF_Operation* idn = TF_FinishOperation(d, s);
  TF_CHECK_OK(s);
  REQUIRE(idn != NULL);
  TF_DataType types[3] = {TF_DOUBLE, TF_DOUBLE, TF_DOUBLE};
  TF_OperationGetAttrTypeList(idn, "T", types, 3, s);
  TF_CHECK_OK(s);
  CHECK(types[0] == TF_FLOAT && types[1] == TF_INT32 && types[2] == TF_DOUBLE);
  TF_AttrMetadata meta = TF_OperationGetAttrMetadata(idn, "T", s);
  TF_CHECK_OK(s);
  CHECK(meta.is_list == 1 && meta.list_size == 2 && meta.type == TF_ATTR_TYPE && meta.total_size == -1);
  CHECK(TF_OperationNumOutputs(idn) == 2);
  CHECK(TF_OperationOutputListLength(idn, "output", s) == 2);
  TF_CHECK_OK(s);
  CHECK(TF_OperationInputListLength(idn, "input", s) == 2);
  TF_CHECK_OK(s);
  CHECK(TF_OperationOutputType(out_at(idn, 0)) == TF_FLOAT);
  CHECK(TF_OperationOutputType(out_at(idn, 1)) == TF_INT32);
  CHECK(TF_OperationInputType(in_at(idn, 1)) == TF_INT32);
  CHECK(shape_is(g, out_at(idn, 1), &three, 1));

  /* Too short a list for N >= 2; a single tensor for a list arg. */
  d = TF_NewOperation(g, "ConcatV2", "cat_one");
  TF_AddInputList(d, values, 1);
  TF_AddInput(d, out0(axis));
  CHECK(TF_FinishOperation(d, s) == NULL);
  TF_CHECK_ERROR2(s, TF_INVALID_ARGUMENT, "cat_one", "'N'");
  d = TF_NewOperation(g, "AddN", "addn_single");
  TF_AddInput(d, out0(c1));
  CHECK(TF_FinishOperation(d, s) == NULL);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "addn_single");
  CHECK(TF_GraphOperationByName(g, "cat_one") == NULL && TF_GraphOperationByName(g, "addn_single") == NULL);

  TF_Session* session = TF_NewSession(g, NULL, s);
  TF_CHECK_OK(s);
  REQUIRE(session != NULL);
  TF_Output fetches[4] = {out0(cat), out0(addn), out_at(idn, 0), out_at(idn, 1)};
  TF_Tensor* outs[4] = {NULL, NULL, NULL, NULL};
  TF_SessionRun(session, NULL, NULL, NULL, 0, fetches, outs, 4, NULL, 0, NULL, s);
  TF_CHECK_OK(s);
  const float want_cat[6] = {1, 2, 5, 3, 4, 6};
  CHECK(floats_are(outs[0], want_cat, 6) && dims_are(outs[0], dims23, 2));
  const float want_sum[2] = {111, 222};
  CHECK(floats_are(outs[1], want_sum, 2));
  CHECK(floats_are(outs[2], v1, 2));
  CHECK(outs[3] != NULL && TF_TensorType(outs[3]) == TF_INT32 && TF_TensorElementCount(outs[3]) == 3);
  if (outs[3] != NULL && TF_TensorType(outs[3]) == TF_INT32 && TF_TensorElementCount(outs[3]) == 3) {
    const int32_t* got = (const int32_t*)TF_TensorData(outs[3]);
    CHECK(got[0] == 7 && got[1] == 8 && got[2] == 9);
  }
  for (int i = 0; i < 4; ++i) TF_DeleteTensor(outs[i]);
  TF_DeleteSession(session, s);
  TF_CHECK_OK(s);
  TF_DeleteGraph(g);
  TF_DeleteStatus(s);
}

/* 3. Shape inference, set shapes and shape errors. */
static void test_shapes(void) {
  TF_Status* s = TF_NewStatus();
  TF_Graph* g = TF_NewGraph();
  const int64_t d23[2] = {2, 3}, d34[2] = {3, 4}, d24[2] = {2, 4}, d45[2] = {4, 5};
  TF_Operation* a = placeholder(g, "a", TF_FLOAT, d23, 2, s);
  TF_Operation* b = placeholder(g, "b", TF_FLOAT, d34, 2, s);
  TF_Operation* c = placeholder(g, "c", TF_FLOAT, d45, 2, s);
  TF_CHECK_OK(s);
  REQUIRE(a != NULL && b != NULL && c != NULL);
  TF_Operation* ab = binary(g, "MatMul", "ab", out0(a), out0(b), s);
  TF_CHECK_OK(s);
  REQUIRE(ab != NULL);
  CHECK(shape_is(g, out0(ab), d24, 2));
  /* A num_dims other than the rank. */
  int64_t dims[3] = {0, 0, 0};
  TF_GraphGetTensorShape(g, out0(ab), dims, 3, s);
  CHECK(TF_GetCode(s) == TF_INVALID_ARGUMENT);

  /* No shape attr: unknown rank; then set, merged, refused. */
  TF_Operation* u = placeholder(g, "u", TF_FLOAT, NULL, -2, s);
  TF_CHECK_OK(s);
  REQUIRE(u != NULL);
  CHECK(TF_GraphGetTensorNumDims(g, out0(u), s) == -1);
  TF_CHECK_OK(s);
  const int64_t any5[2] = {-1, 5};
  TF_GraphSetTensorShape(g, out0(u), any5, 2, s);
  TF_CHECK_OK(s);
  CHECK(shape_is(g, out0(u), any5, 2));
  const int64_t d36[2] = {3, 6};
  TF_GraphSetTensorShape(g, out0(u), d36, 2, s);
  CHECK(TF_GetCode(s) == TF_INVALID_ARGUMENT);
  CHECK(shape_is(g, out0(u), any5, 2)); /* unchanged */
  const int64_t d35[2] = {3, 5};
  TF_GraphSetTensorShape(g, out0(u), d35, 2, s); /* merges with [-1, 5] */
  TF_CHECK_OK(s);
  CHECK(shape_is(g, out0(u), d35, 2));
  /* Operations added later see the refined shape. */
  TF_Operation* uid = unary(g, "Identity", "u_id", out0(u), s);
  TF_CHECK_OK(s);
  REQUIRE(uid != NULL);
  CHECK(shape_is(g, out0(uid), d35, 2));

  /* A scalar shape attr is rank 0 (graphs of this producer). */
  TF_Operation* scalar = placeholder(g, "scalar", TF_FLOAT, NULL, 0, s);
  TF_CHECK_OK(s);
  REQUIRE(scalar != NULL);
  CHECK(shape_is(g, out0(scalar), NULL, 0));
  /* A dim of -1 in the attr is unknown. */
  const int64_t any3[2] = {-1, 3};
  TF_Operation* partial = placeholder(g, "partial", TF_FLOAT, any3, 2, s);
  TF_CHECK_OK(s);
  REQUIRE(partial != NULL);
  CHECK(shape_is(g, out0(partial), any3, 2));
  TF_Operation* pb = binary(g, "MatMul", "partial_b", out0(partial), out0(b), s);
  TF_CHECK_OK(s);
  const int64_t any4[2] = {-1, 4};
  CHECK(pb != NULL && shape_is(g, out0(pb), any4, 2));

  /* Inner dims 3 and 4 disagree: refused at TF_FinishOperation. */
  const int before = count_operations(g);
  CHECK(binary(g, "MatMul", "bad_mm", out0(a), out0(c), s) == NULL);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "bad_mm");
  CHECK(count_operations(g) == before);
  CHECK(TF_GraphOperationByName(g, "bad_mm") == NULL);
  TF_Operation* reused = binary(g, "MatMul", "bad_mm", out0(a), out0(b), s); /* the name is free */
  TF_CHECK_OK(s);
  CHECK(reused != NULL && shape_is(g, out0(reused), d24, 2));
  CHECK(count_operations(g) == before + 1);

  /* Reshape [2,3] by a Const [3,-1]: [3,2]. */
  const int64_t two = 2;
  const int32_t sizes[2] = {3, -1};
  TF_Operation* shape = const_ints(g, "new_shape", &two, 1, sizes, 2, s);
  TF_CHECK_OK(s);
  REQUIRE(shape != NULL);
  TF_Operation* reshaped = binary(g, "Reshape", "reshaped", out0(a), out0(shape), s);
  TF_CHECK_OK(s);
  const int64_t d32[2] = {3, 2};
  CHECK(reshaped != NULL && shape_is(g, out0(reshaped), d32, 2));
  /* 6 elements do not fill [4,-1]. */
  const int32_t bad_sizes[2] = {4, -1};
  TF_Operation* bad_shape = const_ints(g, "bad_shape", &two, 1, bad_sizes, 2, s);
  TF_CHECK_OK(s);
  REQUIRE(bad_shape != NULL);
  CHECK(binary(g, "Reshape", "bad_reshape", out0(a), out0(bad_shape), s) == NULL);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "bad_reshape");

  /* Run the reshape: the values keep their order. */
  TF_Session* session = TF_NewSession(g, NULL, s);
  TF_CHECK_OK(s);
  REQUIRE(session != NULL);
  const float av[6] = {1, 2, 3, 4, 5, 6};
  TF_Tensor* at = tf_floats(d23, 2, av, 6);
  TF_Output feed = out0(a);
  TF_Tensor* out = run1(session, &feed, &at, 1, out0(reshaped), s);
  TF_CHECK_OK(s);
  CHECK(floats_are(out, av, 6) && dims_are(out, d32, 2));
  TF_DeleteTensor(out);
  TF_DeleteTensor(at);
  TF_DeleteSession(session, s);
  TF_DeleteGraph(g);
  TF_DeleteStatus(s);
}

/* Whether ops[0, n) holds exactly a and b, in either order. */
static int is_pair(TF_Operation* const* ops, int n, TF_Operation* a, TF_Operation* b) {
  return n == 2 && ((ops[0] == a && ops[1] == b) || (ops[0] == b && ops[1] == a));
}

/* Reads the string list attr `name` of op (one value expected) into buf. */
static void read_class(TF_Operation* op, char* buf, size_t buf_size, TF_Status* s) {
  buf[0] = '\0';
  TF_AttrMetadata meta = TF_OperationGetAttrMetadata(op, "_class", s);
  if (TF_GetCode(s) != TF_OK || meta.list_size != 1 || meta.total_size < 0 ||
      (size_t)meta.total_size >= buf_size) {
    return;
  }
  char storage[256];
  void* values[1] = {NULL};
  size_t lengths[1] = {0};
  TF_OperationGetAttrStringList(op, "_class", values, lengths, 1, storage, (size_t)meta.total_size, s);
  if (TF_GetCode(s) != TF_OK || values[0] == NULL || lengths[0] >= buf_size) return;
  memcpy(buf, values[0], lengths[0]);
  buf[lengths[0]] = '\0';
}

/* 4. Inputs, consumers, control edges, devices, colocation, NodeDefs and
 * the GraphDef. */
static void test_inspection(void) {
  TF_Status* s = TF_NewStatus();
  TF_Graph* g = TF_NewGraph();
  const int64_t two = 2;
  TF_Operation* p = placeholder(g, "p", TF_FLOAT, &two, 1, s);
  const float cv[2] = {1, 2};
  TF_Operation* c = const_floats(g, "c", &two, 1, cv, 2, s);
  TF_CHECK_OK(s);
  REQUIRE(p != NULL && c != NULL);
  TF_Operation* a1 = binary(g, "Add", "a1", out0(p), out0(c), s);
  TF_Operation* m = binary(g, "Mul", "m", out0(c), out0(p), s);
  TF_CHECK_OK(s);
  REQUIRE(a1 != NULL && m != NULL);

  /* Inputs. */
  TF_Output src = TF_OperationInput(in_at(a1, 1));
  CHECK(src.oper == c && src.index == 0);
  src = TF_OperationInput(in_at(m, 1));
  CHECK(src.oper == p && src.index == 0);
  src = TF_OperationInput(in_at(m, 2)); /* no input 2 */
  CHECK(src.oper == NULL && src.index == -1);
  CHECK(TF_OperationInputType(in_at(a1, 0)) == TF_FLOAT);
  TF_Output all[2] = {{NULL, -5}, {NULL, -5}};
  TF_OperationAllInputs(m, all, 2);
  CHECK(all[0].oper == c && all[0].index == 0 && all[1].oper == p && all[1].index == 0);

  /* p:0 feeds a1's input 0 and m's input 1. */
  CHECK(TF_OperationOutputNumConsumers(out0(p)) == 2);
  TF_Input consumers[3] = {{NULL, -5}, {NULL, -5}, {NULL, -5}};
  CHECK(TF_OperationOutputConsumers(out0(p), consumers, 3) == 2);
  const int a1_first = consumers[0].oper == a1;
  const TF_Input to_a1 = consumers[a1_first ? 0 : 1], to_m = consumers[a1_first ? 1 : 0];
  CHECK(to_a1.oper == a1 && to_a1.index == 0 && to_m.oper == m && to_m.index == 1);
  CHECK(consumers[2].oper == NULL && consumers[2].index == -5); /* not written */
  TF_Input first[2] = {{NULL, -5}, {NULL, -5}};
  CHECK(TF_OperationOutputConsumers(out0(p), first, 1) == 2); /* writes at most 1 */
  CHECK(first[0].oper == a1 || first[0].oper == m);
  CHECK(first[1].oper == NULL && first[1].index == -5);
  TF_Operation* dev = NULL;
  CHECK(TF_OperationOutputNumConsumers(out0(a1)) == 0);

  /* Control edges: done waits for a1 and m; after waits for done. */
  TF_OperationDescription* d = TF_NewOperation(g, "NoOp", "done");
  TF_AddControlInput(d, a1);
  TF_AddControlInput(d, m);
  TF_Operation* done = TF_FinishOperation(d, s);
  TF_CHECK_OK(s);
  REQUIRE(done != NULL);
  CHECK(TF_OperationNumInputs(done) == 0 && TF_OperationNumOutputs(done) == 0);
  CHECK(TF_OperationNumControlInputs(done) == 2);
  TF_Operation* ctl[3] = {NULL, NULL, NULL};
  CHECK(is_pair(ctl, TF_OperationGetControlInputs(done, ctl, 3), a1, m));
  CHECK(ctl[2] == NULL);
  CHECK(TF_OperationNumControlOutputs(a1) == 1 && TF_OperationNumControlOutputs(m) == 1);
  TF_Operation* outs_ctl[2] = {NULL, NULL};
  CHECK(TF_OperationGetControlOutputs(a1, outs_ctl, 2) == 1 && outs_ctl[0] == done && outs_ctl[1] == NULL);
  CHECK(TF_OperationNumControlInputs(a1) == 0 && TF_OperationNumControlOutputs(p) == 0);
  d = TF_NewOperation(g, "Identity", "after");
  TF_AddInput(d, out0(a1));
  TF_AddControlInput(d, done);
  TF_Operation* after = TF_FinishOperation(d, s);
  TF_CHECK_OK(s);
  REQUIRE(after != NULL);
  CHECK(TF_OperationNumInputs(after) == 1 && TF_OperationNumControlInputs(after) == 1);
  CHECK(TF_OperationNumControlOutputs(done) == 1);
  outs_ctl[0] = NULL;
  CHECK(TF_OperationGetControlOutputs(done, outs_ctl, 2) == 1 && outs_ctl[0] == after);
  /* a1:0 feeds after; its control edge to done is no consumer. */
  CHECK(TF_OperationOutputNumConsumers(out0(a1)) == 1);

  /* Device and colocation. */
  d = TF_NewOperation(g, "Identity", "dev");
  TF_AddInput(d, out0(m));
  TF_SetDevice(d, "/device:CPU:0");
  dev = TF_FinishOperation(d, s);
  TF_CHECK_OK(s);
  REQUIRE(dev != NULL);
  CHECK(strcmp(TF_OperationDevice(dev), "/device:CPU:0") == 0);
  d = TF_NewOperation(g, "Identity", "col");
  TF_AddInput(d, out0(m));
  TF_ColocateWith(d, c);
  TF_Operation* col = TF_FinishOperation(d, s);
  TF_CHECK_OK(s);
  REQUIRE(col != NULL);
  TF_AttrMetadata meta = TF_OperationGetAttrMetadata(col, "_class", s);
  TF_CHECK_OK(s);
  CHECK(meta.is_list == 1 && meta.list_size == 1 && meta.type == TF_ATTR_STRING &&
        meta.total_size == (int64_t)strlen("loc:@c"));
  char cls[64];
  read_class(col, cls, sizeof cls, s);
  TF_CHECK_OK(s);
  CHECK(strcmp(cls, "loc:@c") == 0);
  /* Too small a storage buffer is an error. */
  char tiny[2];
  void* vals[1] = {NULL};
  size_t lens[1] = {0};
  TF_OperationGetAttrStringList(col, "_class", vals, lens, 1, tiny, sizeof tiny, s);
  CHECK(TF_GetCode(s) != TF_OK);

  /* NodeDefs: name, op, inputs, control inputs, attrs. */
  TF_Buffer* nd = TF_NewBuffer();
  TF_OperationToNodeDef(after, nd, s);
  TF_CHECK_OK(s);
  CHECK(nd->data != NULL && nd->length > 0);
  CHECK(buffer_contains(nd, "after") && buffer_contains(nd, "Identity") && buffer_contains(nd, "a1") &&
        buffer_contains(nd, "^done"));
  TF_DeleteBuffer(nd);
  nd = TF_NewBuffer();
  TF_OperationToNodeDef(col, nd, s);
  TF_CHECK_OK(s);
  CHECK(buffer_contains(nd, "_class") && buffer_contains(nd, "loc:@c"));
  TF_DeleteBuffer(nd);
  nd = TF_NewBuffer();
  TF_OperationToNodeDef(dev, nd, s);
  TF_CHECK_OK(s);
  CHECK(buffer_contains(nd, "/device:CPU:0"));
  TF_DeleteBuffer(nd);

  /* The GraphDef re-imports (under a prefix) with the same operations. */
  const int n_ops = count_operations(g);
  CHECK(n_ops == 8);
  TF_Buffer* def = TF_NewBuffer();
  TF_GraphToGraphDef(g, def, s);
  TF_CHECK_OK(s);
  CHECK(def->data != NULL && def->length > 0);
  TF_Graph* g2 = TF_NewGraph();
  TF_ImportGraphDefOptions* opts = TF_NewImportGraphDefOptions();
  TF_ImportGraphDefOptionsSetPrefix(opts, "copy");
  TF_GraphImportGraphDef(g2, def, opts, s);
  TF_CHECK_OK(s);
  TF_DeleteImportGraphDefOptions(opts);
  TF_DeleteBuffer(def);
  CHECK(count_operations(g2) == n_ops);
  TF_Operation* copy_after = TF_GraphOperationByName(g2, "copy/after");
  TF_Operation* copy_done = TF_GraphOperationByName(g2, "copy/done");
  TF_Operation* copy_col = TF_GraphOperationByName(g2, "copy/col");
  TF_Operation* copy_dev = TF_GraphOperationByName(g2, "copy/dev");
  REQUIRE(copy_after != NULL && copy_done != NULL && copy_col != NULL && copy_dev != NULL);
  TF_Operation* copy_ctl = NULL;
  CHECK(TF_OperationGetControlInputs(copy_after, &copy_ctl, 1) == 1 && copy_ctl == copy_done);
  CHECK(TF_OperationNumControlInputs(copy_done) == 2);
  CHECK(strcmp(TF_OperationDevice(copy_dev), "/device:CPU:0") == 0);
  read_class(copy_col, cls, sizeof cls, s);
  TF_CHECK_OK(s);
  CHECK(strcmp(cls, "loc:@copy/c") == 0);
  TF_DeleteGraph(g2);

  /* And it runs: a1 = p + c, m = c * p. */
  TF_Session* session = TF_NewSession(g, NULL, s);
  TF_CHECK_OK(s);
  REQUIRE(session != NULL);
  const float pv[2] = {3, 4};
  TF_Tensor* pt = tf_floats(&two, 1, pv, 2);
  TF_Output feed = out0(p);
  TF_Output fetches[3] = {out0(after), out0(dev), out0(col)};
  TF_Tensor* outs[3] = {NULL, NULL, NULL};
  const TF_Operation* targets[1] = {done};
  TF_SessionRun(session, NULL, &feed, &pt, 1, fetches, outs, 3, targets, 1, NULL, s);
  TF_CHECK_OK(s);
  const float want_a1[2] = {4, 6}, want_m[2] = {3, 8};
  CHECK(floats_are(outs[0], want_a1, 2));
  CHECK(floats_are(outs[1], want_m, 2));
  CHECK(floats_are(outs[2], want_m, 2));
  for (int i = 0; i < 3; ++i) TF_DeleteTensor(outs[i]);
  TF_DeleteTensor(pt);
  TF_DeleteSession(session, s);
  TF_DeleteGraph(g);
  TF_DeleteStatus(s);
}

/* 5. Attr setters and getters of each kind. */
static void test_attrs(void) {
  TF_Status* s = TF_NewStatus();
  TF_Graph* g = TF_NewGraph();

  /* Strings and a shape: VariableV2. */
  TF_OperationDescription* d = TF_NewOperation(g, "VariableV2", "var");
  const int64_t d23[2] = {2, 3};
  TF_SetAttrShape(d, "shape", d23, 2);
  TF_SetAttrType(d, "dtype", TF_FLOAT);
  TF_SetAttrString(d, "container", "c1", 2);
  TF_SetAttrString(d, "shared_name", "shared_v", 8);
  TF_Operation* var = TF_FinishOperation(d, s);
  TF_CHECK_OK(s);
  REQUIRE(var != NULL);
  CHECK(TF_OperationOutputType(out0(var)) == (TF_DataType)(TF_FLOAT + 100)); /* float_ref */
  CHECK(shape_is(g, out0(var), d23, 2));
  TF_AttrMetadata meta = TF_OperationGetAttrMetadata(var, "shared_name", s);
  TF_CHECK_OK(s);
  CHECK(meta.is_list == 0 && meta.list_size == -1 && meta.type == TF_ATTR_STRING && meta.total_size == 8);
  char str[16] = {0};
  TF_OperationGetAttrString(var, "shared_name", str, sizeof str, s);
  TF_CHECK_OK(s);
  CHECK(memcmp(str, "shared_v", 8) == 0);
  memset(str, 0, sizeof str);
  TF_OperationGetAttrString(var, "container", str, sizeof str, s);
  TF_CHECK_OK(s);
  CHECK(memcmp(str, "c1", 2) == 0);
  meta = TF_OperationGetAttrMetadata(var, "shape", s);
  TF_CHECK_OK(s);
  CHECK(meta.is_list == 0 && meta.type == TF_ATTR_SHAPE && meta.total_size == 2);
  int64_t shape[2] = {0, 0};
  TF_OperationGetAttrShape(var, "shape", shape, 2, s);
  TF_CHECK_OK(s);
  CHECK(shape[0] == 2 && shape[1] == 3);
  TF_DataType type = TF_DOUBLE;
  TF_OperationGetAttrType(var, "dtype", &type, s);
  TF_CHECK_OK(s);
  CHECK(type == TF_FLOAT);
  meta = TF_OperationGetAttrMetadata(var, "dtype", s);
  TF_CHECK_OK(s);
  CHECK(meta.is_list == 0 && meta.type == TF_ATTR_TYPE && meta.total_size == -1);

  /* A shape as a TensorShapeProto {dim {size: 4} dim {size: 5}}; the
   * container left at its default "". */
  const unsigned char shape_proto[8] = {0x12, 0x02, 0x08, 0x04, 0x12, 0x02, 0x08, 0x05};
  d = TF_NewOperation(g, "VariableV2", "var2");
  TF_SetAttrTensorShapeProto(d, "shape", shape_proto, sizeof shape_proto, s);
  TF_CHECK_OK(s);
  TF_SetAttrType(d, "dtype", TF_INT32);
  TF_Operation* var2 = TF_FinishOperation(d, s);
  TF_CHECK_OK(s);
  REQUIRE(var2 != NULL);
  const int64_t d45[2] = {4, 5};
  CHECK(shape_is(g, out0(var2), d45, 2));
  meta = TF_OperationGetAttrMetadata(var2, "container", s);
  TF_CHECK_OK(s);
  CHECK(meta.type == TF_ATTR_STRING && meta.total_size == 0);
  TF_Buffer* shape_buf = TF_NewBuffer();
  TF_OperationGetAttrTensorShapeProto(var2, "shape", shape_buf, s);
  TF_CHECK_OK(s);
  CHECK(shape_buf->length == sizeof shape_proto && memcmp(shape_buf->data, shape_proto, sizeof shape_proto) == 0);
  TF_DeleteBuffer(shape_buf);
  /* Not a TensorShapeProto: refused by the setter or by Finish. */
  const char garbage[3] = {0x12, 0x7f, 0x08};
  d = TF_NewOperation(g, "VariableV2", "var_bad");
  TF_SetAttrTensorShapeProto(d, "shape", garbage, sizeof garbage, s);
  const TF_Code setter_code = TF_GetCode(s);
  TF_SetAttrType(d, "dtype", TF_FLOAT);
  CHECK(TF_FinishOperation(d, s) == NULL);
  CHECK(setter_code == TF_INVALID_ARGUMENT || TF_GetCode(s) == TF_INVALID_ARGUMENT);
  CHECK(TF_GraphOperationByName(g, "var_bad") == NULL);

  /* An int list and string defaults: Conv2D. */
  const int64_t in_dims[4] = {1, 4, 4, 1}, f_dims[4] = {2, 2, 1, 1};
  TF_Operation* image = placeholder(g, "image", TF_FLOAT, in_dims, 4, s);
  const float ones[4] = {1, 1, 1, 1};
  TF_Operation* filter = const_floats(g, "filter", f_dims, 4, ones, 4, s);
  TF_CHECK_OK(s);
  REQUIRE(image != NULL && filter != NULL);
  d = TF_NewOperation(g, "Conv2D", "conv");
  TF_AddInput(d, out0(image));
  TF_AddInput(d, out0(filter));
  const int64_t strides[4] = {1, 2, 2, 1};
  TF_SetAttrIntList(d, "strides", strides, 4);
  TF_SetAttrString(d, "padding", "VALID", 5);
  TF_Operation* conv = TF_FinishOperation(d, s);
  TF_CHECK_OK(s);
  REQUIRE(conv != NULL);
  meta = TF_OperationGetAttrMetadata(conv, "strides", s);
  TF_CHECK_OK(s);
  CHECK(meta.is_list == 1 && meta.list_size == 4 && meta.type == TF_ATTR_INT);
  int64_t ints[5] = {0, 0, 0, 0, 99};
  TF_OperationGetAttrIntList(conv, "strides", ints, 5, s);
  TF_CHECK_OK(s);
  CHECK(ints[0] == 1 && ints[1] == 2 && ints[2] == 2 && ints[3] == 1 && ints[4] == 99);
  TF_OperationGetAttrIntList(conv, "dilations", ints, 4, s); /* default [1, 1, 1, 1] */
  TF_CHECK_OK(s);
  CHECK(ints[0] == 1 && ints[1] == 1 && ints[2] == 1 && ints[3] == 1);
  meta = TF_OperationGetAttrMetadata(conv, "explicit_paddings", s); /* default [] */
  TF_CHECK_OK(s);
  CHECK(meta.is_list == 1 && meta.list_size == 0);
  memset(str, 0, sizeof str);
  TF_OperationGetAttrString(conv, "data_format", str, sizeof str, s); /* default "NHWC" */
  TF_CHECK_OK(s);
  CHECK(memcmp(str, "NHWC", 4) == 0);
  memset(str, 0, sizeof str);
  TF_OperationGetAttrString(conv, "padding", str, sizeof str, s);
  TF_CHECK_OK(s);
  CHECK(memcmp(str, "VALID", 5) == 0);
  unsigned char flag = 7;
  TF_OperationGetAttrBool(conv, "use_cudnn_on_gpu", &flag, s); /* default true */
  TF_CHECK_OK(s);
  CHECK(flag == 1);
  /* (4 - 2) / 2 + 1 = 2 per spatial dim. */
  const int64_t conv_dims[4] = {1, 2, 2, 1};
  CHECK(shape_is(g, out0(conv), conv_dims, 4));
  TF_Buffer* nd = TF_NewBuffer();
  TF_OperationToNodeDef(conv, nd, s); /* defaults filled in */
  TF_CHECK_OK(s);
  CHECK(buffer_contains(nd, "dilations") && buffer_contains(nd, "data_format") && buffer_contains(nd, "NHWC"));
  TF_DeleteBuffer(nd);
  /* A padding outside {'SAME', 'VALID', 'EXPLICIT'}. */
  d = TF_NewOperation(g, "Conv2D", "conv_bad");
  TF_AddInput(d, out0(image));
  TF_AddInput(d, out0(filter));
  TF_SetAttrIntList(d, "strides", strides, 4);
  TF_SetAttrString(d, "padding", "FOO", 3);
  CHECK(TF_FinishOperation(d, s) == NULL);
  TF_CHECK_ERROR2(s, TF_INVALID_ARGUMENT, "conv_bad", "padding");

  /* A float: LeakyRelu's alpha, set and defaulted. */
  const int64_t two = 2;
  const float lv[2] = {-1, 2};
  TF_Operation* lin = const_floats(g, "lin", &two, 1, lv, 2, s);
  TF_CHECK_OK(s);
  REQUIRE(lin != NULL);
  d = TF_NewOperation(g, "LeakyRelu", "lrelu");
  TF_AddInput(d, out0(lin));
  TF_SetAttrFloat(d, "alpha", 0.1f);
  TF_Operation* lrelu = TF_FinishOperation(d, s);
  TF_CHECK_OK(s);
  TF_Operation* lrelu_default = unary(g, "LeakyRelu", "lrelu_default", out0(lin), s);
  TF_CHECK_OK(s);
  REQUIRE(lrelu != NULL && lrelu_default != NULL);
  float alpha = 0;
  TF_OperationGetAttrFloat(lrelu, "alpha", &alpha, s);
  TF_CHECK_OK(s);
  CHECK(alpha == 0.1f);
  TF_OperationGetAttrFloat(lrelu_default, "alpha", &alpha, s);
  TF_CHECK_OK(s);
  CHECK(alpha == 0.2f);
  meta = TF_OperationGetAttrMetadata(lrelu, "alpha", s);
  TF_CHECK_OK(s);
  CHECK(meta.is_list == 0 && meta.type == TF_ATTR_FLOAT);

  /* Bool and int AttrValues as bytes: b (field 5) and i (field 3). */
  const float wv[4] = {5, 6, 7, 8};
  const int64_t d22[2] = {2, 2};
  TF_Operation* w = const_floats(g, "w", d22, 2, wv, 4, s);
  TF_CHECK_OK(s);
  REQUIRE(w != NULL);
  d = TF_NewOperation(g, "MatMul", "mm");
  TF_AddInput(d, out0(w));
  TF_AddInput(d, out0(w));
  const unsigned char true_proto[2] = {0x28, 0x01};
  TF_SetAttrValueProto(d, "transpose_a", true_proto, sizeof true_proto, s);
  TF_CHECK_OK(s);
  TF_Operation* mm = TF_FinishOperation(d, s);
  TF_CHECK_OK(s);
  REQUIRE(mm != NULL);
  TF_OperationGetAttrBool(mm, "transpose_a", &flag, s);
  TF_CHECK_OK(s);
  CHECK(flag == 1);
  meta = TF_OperationGetAttrMetadata(mm, "transpose_a", s);
  TF_CHECK_OK(s);
  CHECK(meta.is_list == 0 && meta.type == TF_ATTR_BOOL);
  TF_Buffer* value = TF_NewBuffer();
  TF_OperationGetAttrValueProto(mm, "transpose_a", value, s);
  TF_CHECK_OK(s);
  CHECK(value->length == 2 && memcmp(value->data, true_proto, 2) == 0);
  TF_DeleteBuffer(value);
  TF_Operation* addn = NULL;
  {
    const TF_Output terms[3] = {out0(lin), out0(lin), out0(lin)};
    d = TF_NewOperation(g, "AddN", "addn");
    TF_AddInputList(d, terms, 3);
    addn = TF_FinishOperation(d, s);
    TF_CHECK_OK(s);
  }
  REQUIRE(addn != NULL);
  value = TF_NewBuffer();
  TF_OperationGetAttrValueProto(addn, "N", value, s);
  TF_CHECK_OK(s);
  const unsigned char three_proto[2] = {0x18, 0x03};
  CHECK(value->length == 2 && memcmp(value->data, three_proto, 2) == 0);
  TF_DeleteBuffer(value);
  meta = TF_OperationGetAttrMetadata(addn, "N", s);
  TF_CHECK_OK(s);
  CHECK(meta.is_list == 0 && meta.type == TF_ATTR_INT && meta.total_size == -1);
  /* Bytes that are not an AttrValue. */
  d = TF_NewOperation(g, "MatMul", "mm_bad_proto");
  TF_AddInput(d, out0(w));
  TF_AddInput(d, out0(w));
  TF_SetAttrValueProto(d, "transpose_a", garbage, sizeof garbage, s);
  const TF_Code proto_code = TF_GetCode(s);
  TF_Operation* bad_proto = TF_FinishOperation(d, s);
  CHECK(proto_code == TF_INVALID_ARGUMENT || (bad_proto == NULL && TF_GetCode(s) == TF_INVALID_ARGUMENT));

  /* A tensor: the Const's value. */
  TF_Tensor* wt = NULL;
  TF_OperationGetAttrTensor(w, "value", &wt, s);
  TF_CHECK_OK(s);
  CHECK(floats_are(wt, wv, 4) && dims_are(wt, d22, 2));
  TF_DeleteTensor(wt);
  meta = TF_OperationGetAttrMetadata(w, "value", s);
  TF_CHECK_OK(s);
  CHECK(meta.is_list == 0 && meta.type == TF_ATTR_TENSOR);

  /* Type and shape lists: FIFOQueueV2. */
  d = TF_NewOperation(g, "FIFOQueueV2", "queue");
  const TF_DataType component_types[2] = {TF_FLOAT, TF_INT32};
  TF_SetAttrTypeList(d, "component_types", component_types, 2);
  const int64_t qs0[1] = {2}, qs1[2] = {-1, 3};
  const int64_t* const qshapes[2] = {qs0, qs1};
  const int qranks[2] = {1, 2};
  TF_SetAttrShapeList(d, "shapes", qshapes, qranks, 2);
  TF_SetAttrInt(d, "capacity", 10);
  TF_SetAttrString(d, "shared_name", "q", 1);
  TF_Operation* queue = TF_FinishOperation(d, s);
  TF_CHECK_OK(s);
  REQUIRE(queue != NULL);
  CHECK(TF_OperationOutputType(out0(queue)) == TF_RESOURCE);
  meta = TF_OperationGetAttrMetadata(queue, "shapes", s);
  TF_CHECK_OK(s);
  CHECK(meta.is_list == 1 && meta.list_size == 2 && meta.type == TF_ATTR_SHAPE && meta.total_size == 3);
  int64_t storage[3] = {0, 0, 0};
  int64_t* dims[2] = {NULL, NULL};
  int ranks[2] = {0, 0};
  TF_OperationGetAttrShapeList(queue, "shapes", dims, ranks, 2, storage, 3, s);
  TF_CHECK_OK(s);
  CHECK(ranks[0] == 1 && ranks[1] == 2);
  CHECK(dims[0] != NULL && dims[1] != NULL);
  if (dims[0] != NULL && dims[1] != NULL) CHECK(dims[0][0] == 2 && dims[1][0] == -1 && dims[1][1] == 3);
  TF_DataType types[2] = {TF_DOUBLE, TF_DOUBLE};
  TF_OperationGetAttrTypeList(queue, "component_types", types, 2, s);
  TF_CHECK_OK(s);
  CHECK(types[0] == TF_FLOAT && types[1] == TF_INT32);
  int64_t capacity = 0;
  TF_OperationGetAttrInt(queue, "capacity", &capacity, s);
  TF_CHECK_OK(s);
  CHECK(capacity == 10);
  /* component_types: list(type) >= 1. */
  d = TF_NewOperation(g, "FIFOQueueV2", "queue_empty");
  TF_SetAttrTypeList(d, "component_types", NULL, 0);
  CHECK(TF_FinishOperation(d, s) == NULL);
  TF_CHECK_ERROR2(s, TF_INVALID_ARGUMENT, "queue_empty", "component_types");

  /* Attrs whose names start with '_' are the user's on any op (as
   * "_class"): float, bool and string lists. */
  d = TF_NewOperation(g, "Identity", "tagged");
  TF_AddInput(d, out0(lin));
  const float fl[2] = {1.5f, -2.0f};
  TF_SetAttrFloatList(d, "_floats", fl, 2);
  const unsigned char bl[3] = {1, 0, 1};
  TF_SetAttrBoolList(d, "_bools", bl, 3);
  const void* const sv[2] = {"ab", "cde"};
  const size_t sl[2] = {2, 3};
  TF_SetAttrStringList(d, "_strings", sv, sl, 2);
  TF_Operation* tagged = TF_FinishOperation(d, s);
  TF_CHECK_OK(s);
  if (tagged != NULL) {
    float fgot[2] = {0, 0};
    TF_OperationGetAttrFloatList(tagged, "_floats", fgot, 2, s);
    TF_CHECK_OK(s);
    CHECK(fgot[0] == 1.5f && fgot[1] == -2.0f);
    unsigned char bgot[3] = {9, 9, 9};
    TF_OperationGetAttrBoolList(tagged, "_bools", bgot, 3, s);
    TF_CHECK_OK(s);
    CHECK(bgot[0] == 1 && bgot[1] == 0 && bgot[2] == 1);
    meta = TF_OperationGetAttrMetadata(tagged, "_strings", s);
    TF_CHECK_OK(s);
    CHECK(meta.is_list == 1 && meta.list_size == 2 && meta.type == TF_ATTR_STRING && meta.total_size == 5);
    char sstore[5];
    void* svals[2] = {NULL, NULL};
    size_t slens[2] = {0, 0};
    TF_OperationGetAttrStringList(tagged, "_strings", svals, slens, 2, sstore, sizeof sstore, s);
    TF_CHECK_OK(s);
    CHECK(slens[0] == 2 && slens[1] == 3 && svals[0] != NULL && svals[1] != NULL);
    if (svals[0] != NULL && svals[1] != NULL) CHECK(memcmp(svals[0], "ab", 2) == 0 && memcmp(svals[1], "cde", 3) == 0);
  }

  /* Run: conv of 1..16 by a 2x2 box with stride 2; the leaky relus. */
  TF_Session* session = TF_NewSession(g, NULL, s);
  TF_CHECK_OK(s);
  REQUIRE(session != NULL);
  float iv[16];
  for (int i = 0; i < 16; ++i) iv[i] = (float)(i + 1);
  TF_Tensor* it = tf_floats(in_dims, 4, iv, 16);
  TF_Output feed = out0(image);
  TF_Output fetches[3] = {out0(conv), out0(lrelu), out0(lrelu_default)};
  TF_Tensor* outs[3] = {NULL, NULL, NULL};
  TF_SessionRun(session, NULL, &feed, &it, 1, fetches, outs, 3, NULL, 0, NULL, s);
  TF_CHECK_OK(s);
  const float want_conv[4] = {1 + 2 + 5 + 6, 3 + 4 + 7 + 8, 9 + 10 + 13 + 14, 11 + 12 + 15 + 16};
  CHECK(floats_are(outs[0], want_conv, 4) && dims_are(outs[0], conv_dims, 4));
  const float want_l1[2] = {-0.1f, 2}, want_l2[2] = {-0.2f, 2};
  CHECK(floats_are(outs[1], want_l1, 2));
  CHECK(floats_are(outs[2], want_l2, 2));
  for (int i = 0; i < 3; ++i) TF_DeleteTensor(outs[i]);
  TF_DeleteTensor(it);
  TF_DeleteSession(session, s);
  TF_DeleteGraph(g);
  TF_DeleteStatus(s);
}

/* 6. Errors: each leaves the graph as it was, and it keeps working. */
static void test_errors(void) {
  TF_Status* s = TF_NewStatus();
  TF_Graph* g = TF_NewGraph();
  const int64_t two = 2;
  TF_Operation* x = placeholder(g, "x", TF_FLOAT, &two, 1, s);
  const float cv[2] = {1, 2};
  TF_Operation* c = const_floats(g, "c", &two, 1, cv, 2, s);
  const int32_t iv[2] = {1, 2};
  TF_Operation* ic = const_ints(g, "ic", &two, 1, iv, 2, s);
  const int64_t d22[2] = {2, 2};
  TF_Operation* m = placeholder(g, "m", TF_FLOAT, d22, 2, s);
  TF_Operation* mi = placeholder(g, "mi", TF_INT32, d22, 2, s);
  TF_CHECK_OK(s);
  REQUIRE(x != NULL && c != NULL && ic != NULL && m != NULL && mi != NULL);
  const int n_ops = count_operations(g);

  /* An op no plugin defines. */
  TF_OperationDescription* d = TF_NewOperation(g, "NoSuchOp", "unknown");
  TF_AddInput(d, out0(x));
  CHECK(TF_FinishOperation(d, s) == NULL);
  CHECK(TF_GetCode(s) == TF_NOT_FOUND || TF_GetCode(s) == TF_INVALID_ARGUMENT);
  CHECK(strstr(TF_Message(s), "NoSuchOp") != NULL);

  /* A name that exists. */
  CHECK(unary(g, "Identity", "x", out0(c), s) == NULL);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "'x'");
  CHECK(TF_GraphOperationByName(g, "x") == x && strcmp(TF_OperationOpType(x), "Placeholder") == 0);

  /* Not a node name. */
  CHECK(unary(g, "Identity", "bad name!", out0(c), s) == NULL);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "bad name!");
  CHECK(unary(g, "Identity", "", out0(c), s) == NULL);
  CHECK(TF_GetCode(s) == TF_INVALID_ARGUMENT);

  /* Too few inputs. */
  CHECK(unary(g, "Add", "half_add", out0(x), s) == NULL);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "half_add");
  /* Too many. */
  d = TF_NewOperation(g, "Identity", "two_ids");
  TF_AddInput(d, out0(x));
  TF_AddInput(d, out0(c));
  CHECK(TF_FinishOperation(d, s) == NULL);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "two_ids");

  /* float and int32 for one T. */
  CHECK(binary(g, "MatMul", "mixed_mm", out0(m), out0(mi), s) == NULL);
  TF_CHECK_ERROR2(s, TF_INVALID_ARGUMENT, "mixed_mm", "'T'");
  /* An explicit T the inputs disagree with. */
  d = TF_NewOperation(g, "Add", "int_add");
  TF_AddInput(d, out0(x));
  TF_AddInput(d, out0(c));
  TF_SetAttrType(d, "T", TF_INT32);
  CHECK(TF_FinishOperation(d, s) == NULL);
  TF_CHECK_ERROR2(s, TF_INVALID_ARGUMENT, "int_add", "Inconsistent values for attr 'T'");
  /* An explicit T that agrees is fine. */
  d = TF_NewOperation(g, "Add", "float_add");
  TF_AddInput(d, out0(x));
  TF_AddInput(d, out0(c));
  TF_SetAttrType(d, "T", TF_FLOAT);
  TF_Operation* float_add = TF_FinishOperation(d, s);
  TF_CHECK_OK(s);
  CHECK(float_add != NULL);
  /* A T outside MatMul's allowed types (bool). */
  const unsigned char bools[4] = {1, 0, 0, 1};
  TF_Tensor* bt = TF_AllocateTensor(TF_BOOL, d22, 2, 4);
  REQUIRE(bt != NULL);
  memcpy(TF_TensorData(bt), bools, 4);
  TF_Operation* bc = const_tensor(g, "bc", bt, s);
  TF_CHECK_OK(s);
  TF_DeleteTensor(bt);
  REQUIRE(bc != NULL);
  CHECK(binary(g, "MatMul", "bool_mm", out0(bc), out0(bc), s) == NULL);
  TF_CHECK_ERROR2(s, TF_INVALID_ARGUMENT, "bool_mm", "'T'");

  /* A required attr left unset; an attr the op does not have. */
  d = TF_NewOperation(g, "Placeholder", "no_dtype");
  CHECK(TF_FinishOperation(d, s) == NULL);
  TF_CHECK_ERROR2(s, TF_INVALID_ARGUMENT, "no_dtype", "dtype");
  d = TF_NewOperation(g, "Identity", "extra_attr");
  TF_AddInput(d, out0(x));
  TF_SetAttrInt(d, "no_such_attr", 3);
  CHECK(TF_FinishOperation(d, s) == NULL);
  TF_CHECK_ERROR2(s, TF_INVALID_ARGUMENT, "extra_attr", "no_such_attr");
  /* An attr of the wrong kind: a string for MatMul's bool. */
  d = TF_NewOperation(g, "MatMul", "string_flag");
  TF_AddInput(d, out0(m));
  TF_AddInput(d, out0(m));
  TF_SetAttrString(d, "transpose_a", "yes", 3);
  CHECK(TF_FinishOperation(d, s) == NULL);
  TF_CHECK_ERROR2(s, TF_INVALID_ARGUMENT, "string_flag", "transpose_a");
  /* A NULL attr name. */
  d = TF_NewOperation(g, "Identity", "null_attr");
  TF_AddInput(d, out0(x));
  TF_SetAttrInt(d, NULL, 3);
  CHECK(TF_FinishOperation(d, s) == NULL);
  CHECK(TF_GetCode(s) == TF_INVALID_ARGUMENT);

  /* An input of another graph. */
  TF_Graph* other = TF_NewGraph();
  TF_Operation* foreign = placeholder(other, "foreign", TF_FLOAT, &two, 1, s);
  TF_CHECK_OK(s);
  REQUIRE(foreign != NULL);
  CHECK(binary(g, "Add", "cross_graph", out0(x), out0(foreign), s) == NULL);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "cross_graph");
  CHECK(TF_OperationOutputNumConsumers(out0(foreign)) == 0);
  TF_DeleteGraph(other);

  /* A value output for a ref input (Assign's ref). */
  d = TF_NewOperation(g, "Assign", "assign_const");
  TF_AddInput(d, out0(c));
  TF_AddInput(d, out0(c));
  CHECK(TF_FinishOperation(d, s) == NULL);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "assign_const");

  /* None of it was added; no consumers were recorded. */
  CHECK(count_operations(g) == n_ops + 2); /* float_add, bc */
  CHECK(TF_OperationOutputNumConsumers(out0(x)) == 1); /* float_add */
  CHECK(TF_OperationOutputNumConsumers(out0(m)) == 0);
  const char* const refused[] = {"unknown", "bad name!", "half_add", "two_ids", "mixed_mm", "int_add", "bool_mm",
                                 "no_dtype", "extra_attr", "string_flag", "null_attr", "cross_graph", "assign_const"};
  for (size_t i = 0; i < sizeof refused / sizeof refused[0]; ++i) {
    if (TF_GraphOperationByName(g, refused[i]) != NULL) {
      fprintf(stderr, "%s:%d: refused operation '%s' is in the graph\n", __FILE__, __LINE__, refused[i]);
      ++c_test_failures_;
    }
  }

  /* Getters on attrs that are missing or of another type. */
  int64_t iv64 = 0;
  TF_OperationGetAttrInt(x, "no_such_attr", &iv64, s);
  TF_CHECK_ERROR2(s, TF_INVALID_ARGUMENT, "no_such_attr", "x");
  TF_OperationGetAttrMetadata(x, "no_such_attr", s);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "no_such_attr");
  d = TF_NewOperation(g, "LeakyRelu", "lrelu");
  TF_AddInput(d, out0(x));
  TF_Operation* lrelu = TF_FinishOperation(d, s);
  TF_CHECK_OK(s);
  REQUIRE(lrelu != NULL);
  TF_OperationGetAttrInt(lrelu, "alpha", &iv64, s); /* a float */
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "alpha");
  TF_DataType type = TF_DOUBLE;
  TF_OperationGetAttrType(lrelu, "alpha", &type, s);
  CHECK(TF_GetCode(s) == TF_INVALID_ARGUMENT);

  /* OpDefs, the op list, versions. */
  TF_Buffer* op_def = TF_NewBuffer();
  TF_GraphGetOpDef(g, "NoSuchOp", op_def, s);
  TF_CHECK_ERROR(s, TF_NOT_FOUND, "NoSuchOp");
  CHECK(op_def->data == NULL && op_def->length == 0);
  TF_GraphGetOpDef(g, "MatMul", op_def, s);
  TF_CHECK_OK(s);
  CHECK(op_def->data != NULL && op_def->length > 0);
  CHECK(buffer_contains(op_def, "MatMul") && buffer_contains(op_def, "transpose_a"));
  TF_DeleteBuffer(op_def);
  TF_Buffer* op_list = TF_GetAllOpList();
  CHECK(op_list != NULL);
  if (op_list != NULL) {
    CHECK(op_list->data != NULL && op_list->length > 0);
    CHECK(buffer_contains(op_list, "ConcatV2") && buffer_contains(op_list, "LeakyRelu") &&
          buffer_contains(op_list, "VariableV2"));
    TF_DeleteBuffer(op_list);
  }
  TF_Buffer* versions = TF_NewBuffer();
  TF_GraphVersions(g, versions, s);
  TF_CHECK_OK(s);
  CHECK(versions->data != NULL && versions->length > 0);
  TF_DeleteBuffer(versions);

  /* The graph still builds and runs: x + c and leaky relu of x. */
  TF_Operation* ok = binary(g, "Add", "ok", out0(x), out0(c), s);
  TF_CHECK_OK(s);
  REQUIRE(ok != NULL);
  TF_Session* session = TF_NewSession(g, NULL, s);
  TF_CHECK_OK(s);
  REQUIRE(session != NULL);
  const float xv[2] = {-10, 20};
  TF_Tensor* xt = tf_floats(&two, 1, xv, 2);
  TF_Output feed = out0(x);
  TF_Output fetches[3] = {out0(ok), out0(float_add), out0(lrelu)};
  TF_Tensor* outs[3] = {NULL, NULL, NULL};
  TF_SessionRun(session, NULL, &feed, &xt, 1, fetches, outs, 3, NULL, 0, NULL, s);
  TF_CHECK_OK(s);
  const float want_sum[2] = {-9, 22}, want_l[2] = {-2, 20};
  CHECK(floats_are(outs[0], want_sum, 2));
  CHECK(floats_are(outs[1], want_sum, 2));
  CHECK(floats_are(outs[2], want_l, 2));
  for (int i = 0; i < 3; ++i) TF_DeleteTensor(outs[i]);
  TF_DeleteTensor(xt);
  TF_DeleteSession(session, s);
  TF_DeleteGraph(g);
  TF_DeleteStatus(s);
}

/* 7. A session made before operations were added runs them. */
static void test_session_grows(void) {
  TF_Status* s = TF_NewStatus();
  TF_Graph* g = TF_NewGraph();
  const int64_t two = 2;
  TF_Operation* p = placeholder(g, "p", TF_FLOAT, &two, 1, s);
  const float cv[2] = {1, 2};
  TF_Operation* c = const_floats(g, "c", &two, 1, cv, 2, s);
  TF_CHECK_OK(s);
  REQUIRE(p != NULL && c != NULL);
  TF_Operation* sum = binary(g, "Add", "sum", out0(p), out0(c), s);
  TF_CHECK_OK(s);
  REQUIRE(sum != NULL);
  TF_Session* session = TF_NewSession(g, NULL, s);
  TF_CHECK_OK(s);
  REQUIRE(session != NULL);
  const float pv[2] = {10, 20};
  TF_Tensor* pt = tf_floats(&two, 1, pv, 2);
  TF_Output feed = out0(p);
  TF_Tensor* out = run1(session, &feed, &pt, 1, out0(sum), s);
  TF_CHECK_OK(s);
  const float want_sum[2] = {11, 22};
  CHECK(floats_are(out, want_sum, 2));
  TF_DeleteTensor(out);

  /* Added after the session's first run. */
  TF_Operation* prod = binary(g, "Mul", "prod", out0(sum), out0(c), s);
  TF_CHECK_OK(s);
  REQUIRE(prod != NULL);
  out = run1(session, &feed, &pt, 1, out0(prod), s);
  TF_CHECK_OK(s);
  const float want_prod[2] = {11, 44};
  CHECK(floats_are(out, want_prod, 2));
  TF_DeleteTensor(out);

  /* A variable: initialized by Assign, read through Identity (a ref feeds
   * a value input), updated by AssignAdd; all added now. */
  TF_OperationDescription* d = TF_NewOperation(g, "VariableV2", "v");
  TF_SetAttrShape(d, "shape", &two, 1);
  TF_SetAttrType(d, "dtype", TF_FLOAT);
  TF_Operation* v = TF_FinishOperation(d, s);
  TF_CHECK_OK(s);
  REQUIRE(v != NULL);
  TF_Operation* init = binary(g, "Assign", "v/init", out0(v), out0(c), s);
  TF_CHECK_OK(s);
  TF_Operation* read = unary(g, "Identity", "v/read", out0(v), s);
  TF_CHECK_OK(s);
  TF_Operation* update = binary(g, "AssignAdd", "v/update", out0(v), out0(sum), s);
  TF_CHECK_OK(s);
  REQUIRE(init != NULL && read != NULL && update != NULL);
  TF_DataType type = TF_DOUBLE;
  TF_OperationGetAttrType(read, "T", &type, s); /* the ref's base type */
  TF_CHECK_OK(s);
  CHECK(type == TF_FLOAT);
  CHECK(TF_OperationOutputType(out0(read)) == TF_FLOAT);
  CHECK(TF_OperationInputType(in_at(read, 0)) == TF_FLOAT);
  TF_OperationGetAttrType(update, "T", &type, s);
  TF_CHECK_OK(s);
  CHECK(type == TF_FLOAT);
  CHECK(TF_OperationOutputType(out0(update)) == (TF_DataType)(TF_FLOAT + 100));
  CHECK(shape_is(g, out0(read), &two, 1));

  const TF_Operation* init_target[1] = {init};
  TF_SessionRun(session, NULL, NULL, NULL, 0, NULL, NULL, 0, init_target, 1, NULL, s);
  TF_CHECK_OK(s);
  out = run1(session, NULL, NULL, 0, out0(read), s);
  TF_CHECK_OK(s);
  CHECK(floats_are(out, cv, 2));
  TF_DeleteTensor(out);
  const TF_Operation* update_target[1] = {update};
  TF_SessionRun(session, NULL, &feed, &pt, 1, NULL, NULL, 0, update_target, 1, NULL, s);
  TF_CHECK_OK(s);
  out = run1(session, NULL, NULL, 0, out0(read), s);
  TF_CHECK_OK(s);
  const float want_v[2] = {1 + 11, 2 + 22};
  CHECK(floats_are(out, want_v, 2));
  TF_DeleteTensor(out);

  TF_DeleteTensor(pt);
  TF_DeleteGraph(g); /* the session keeps it */
  TF_DeleteSession(session, s);
  TF_CHECK_OK(s);
  TF_DeleteStatus(s);
}

/* 8. 2000 operations built in a loop: v_i = Identity(v_{i-1} + 1). */
static void test_long_chain(void) {
  enum { kSteps = 1000 };
  TF_Status* s = TF_NewStatus();
  TF_Graph* g = TF_NewGraph();
  const float one_v = 1;
  TF_Operation* one = const_floats(g, "one", NULL, 0, &one_v, 1, s);
  TF_CHECK_OK(s);
  REQUIRE(one != NULL);
  TF_Output prev = out0(one);
  char name[32];
  for (int i = 1; i <= kSteps; ++i) {
    snprintf(name, sizeof name, "add_%d", i);
    TF_Operation* add = binary(g, "Add", name, prev, out0(one), s);
    REQUIRE(TF_GetCode(s) == TF_OK && add != NULL);
    snprintf(name, sizeof name, "id_%d", i);
    TF_Operation* id = unary(g, "Identity", name, out0(add), s);
    REQUIRE(TF_GetCode(s) == TF_OK && id != NULL);
    prev = out0(id);
  }
  CHECK(count_operations(g) == 2 * kSteps + 1);
  CHECK(shape_is(g, prev, NULL, 0));
  CHECK(TF_GraphOperationByName(g, "id_1000") == prev.oper);
  TF_Session* session = TF_NewSession(g, NULL, s);
  TF_CHECK_OK(s);
  REQUIRE(session != NULL);
  TF_Tensor* out = run1(session, NULL, NULL, 0, prev, s);
  TF_CHECK_OK(s);
  const float want = 1 + kSteps;
  CHECK(floats_are(out, &want, 1) && TF_NumDims(out) == 0);
  TF_DeleteTensor(out);
  TF_DeleteSession(session, s);
  TF_DeleteGraph(g);
  TF_DeleteStatus(s);
}

/* 9. Import with options: a prefix, an input mapping (and one never used),
 * a remapped control input, a control dependency on the nodes with no
 * imported input, returned outputs and operations; unique names and
 * prefixes; all or nothing on a bad return output. */
static int control_inputs_are(TF_Operation* op, TF_Operation* const* want, int n) {
  TF_Operation* got[8] = {NULL};
  if (TF_OperationNumControlInputs(op) != n || TF_OperationGetControlInputs(op, got, 8) != n) return 0;
  for (int i = 0; i < n; ++i) {
    int found = 0;
    for (int k = 0; k < n; ++k) found |= got[k] == want[i];
    if (!found) return 0;
  }
  return 1;
}

static void test_import_options(void) {
  TF_Status* s = TF_NewStatus();
  /* Source: sum = x + c, neg = -sum, done waits for neg. */
  TF_Graph* src = TF_NewGraph();
  const int64_t two[1] = {2};
  const float c_values[2] = {10, 20};
  TF_Operation* x = placeholder(src, "x", TF_FLOAT, two, 1, s);
  TF_Operation* c = const_floats(src, "c", two, 1, c_values, 2, s);
  REQUIRE(x != NULL && c != NULL);
  TF_Operation* sum = binary(src, "AddV2", "sum", out0(x), out0(c), s);
  REQUIRE(sum != NULL);
  TF_Operation* neg = unary(src, "Neg", "neg", out0(sum), s);
  REQUIRE(neg != NULL);
  TF_OperationDescription* d = TF_NewOperation(src, "NoOp", "done");
  TF_AddControlInput(d, neg);
  REQUIRE(TF_FinishOperation(d, s) != NULL);
  TF_Buffer* def = TF_NewBuffer();
  TF_GraphToGraphDef(src, def, s);
  TF_CHECK_OK(s);

  /* Destination: feed = [1, 2] and a gate. */
  TF_Graph* g = TF_NewGraph();
  const float feed_values[2] = {1, 2};
  TF_Operation* feed = const_floats(g, "feed", two, 1, feed_values, 2, s);
  TF_Operation* gate = TF_FinishOperation(TF_NewOperation(g, "NoOp", "gate"), s);
  TF_Operation* gate2 = TF_FinishOperation(TF_NewOperation(g, "NoOp", "gate2"), s);
  REQUIRE(feed != NULL && gate != NULL && gate2 != NULL);

  TF_ImportGraphDefOptions* opts = TF_NewImportGraphDefOptions();
  TF_ImportGraphDefOptionsSetPrefix(opts, "imp");
  TF_ImportGraphDefOptionsAddInputMapping(opts, "x", 0, out0(feed));
  TF_ImportGraphDefOptionsAddInputMapping(opts, "not_in_the_graph_def", 3, out0(feed));
  TF_ImportGraphDefOptionsRemapControlDependency(opts, "neg", gate2);
  TF_ImportGraphDefOptionsAddControlDependency(opts, gate);
  TF_ImportGraphDefOptionsAddReturnOutput(opts, "neg", 0);
  TF_ImportGraphDefOptionsAddReturnOutput(opts, "x", 0); /* mapped: returns feed */
  TF_ImportGraphDefOptionsAddReturnOperation(opts, "done");
  CHECK(TF_ImportGraphDefOptionsNumReturnOutputs(opts) == 2);
  CHECK(TF_ImportGraphDefOptionsNumReturnOperations(opts) == 1);
  TF_ImportGraphDefResults* r = TF_GraphImportGraphDefWithResults(g, def, opts, s);
  TF_CHECK_OK(s);
  REQUIRE(r != NULL);
  int n = 0;
  TF_Output* outs = NULL;
  TF_ImportGraphDefResultsReturnOutputs(r, &n, &outs);
  REQUIRE(n == 2 && outs != NULL);
  CHECK(outs[0].oper == TF_GraphOperationByName(g, "imp/neg") && outs[0].index == 0);
  CHECK(outs[1].oper == feed && outs[1].index == 0);
  TF_Operation** opers = NULL;
  TF_ImportGraphDefResultsReturnOperations(r, &n, &opers);
  CHECK(n == 1 && opers != NULL && opers[0] == TF_GraphOperationByName(g, "imp/done"));
  const char** missing_names = NULL;
  int* missing_indexes = NULL;
  TF_ImportGraphDefResultsMissingUnusedInputMappings(r, &n, &missing_names, &missing_indexes);
  CHECK(n == 1 && strcmp(missing_names[0], "not_in_the_graph_def") == 0 && missing_indexes[0] == 3);

  /* imp/x and imp/c have no imported input: they wait for gate; imp/sum
   * reads imp/c and does not; imp/done's "^neg" became "^gate2" (so it has
   * no imported input either). */
  TF_Operation* imp_x = TF_GraphOperationByName(g, "imp/x");
  TF_Operation* imp_c = TF_GraphOperationByName(g, "imp/c");
  TF_Operation* imp_sum = TF_GraphOperationByName(g, "imp/sum");
  TF_Operation* imp_done = TF_GraphOperationByName(g, "imp/done");
  REQUIRE(imp_x != NULL && imp_c != NULL && imp_sum != NULL && imp_done != NULL);
  CHECK(control_inputs_are(imp_x, &gate, 1));
  CHECK(control_inputs_are(imp_c, &gate, 1));
  CHECK(TF_OperationNumControlInputs(imp_sum) == 0);
  TF_Operation* done_controls[2] = {gate2, gate};
  CHECK(control_inputs_are(imp_done, done_controls, 2));
  /* imp/sum reads feed in place of x. */
  TF_Output sum_in = TF_OperationInput(in_at(imp_sum, 0));
  CHECK(sum_in.oper == feed && sum_in.index == 0);
  CHECK(TF_OperationOutputNumConsumers(out0(imp_x)) == 0);

  /* -(feed + c) = [-11, -22]. */
  TF_Session* session = TF_NewSession(g, NULL, s);
  TF_CHECK_OK(s);
  TF_Tensor* result = run1(session, NULL, NULL, 0, out0(TF_GraphOperationByName(g, "imp/neg")), s);
  TF_CHECK_OK(s);
  const float want[2] = {-11, -22};
  CHECK(floats_are(result, want, 2));
  TF_DeleteTensor(result);
  TF_DeleteImportGraphDefResults(r);

  /* The same prefix again: refused whole; with uniquify_prefix it is imp_1. */
  const int before = count_operations(g);
  TF_ImportGraphDefOptions* again = TF_NewImportGraphDefOptions();
  TF_ImportGraphDefOptionsSetPrefix(again, "imp");
  TF_GraphImportGraphDef(g, def, again, s);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "imp/x");
  CHECK(count_operations(g) == before);
  TF_ImportGraphDefOptionsSetUniquifyPrefix(again, 1);
  TF_GraphImportGraphDef(g, def, again, s);
  TF_CHECK_OK(s);
  CHECK(TF_GraphOperationByName(g, "imp_1/neg") != NULL && count_operations(g) == before + 5);
  /* The session extends itself with it: imp_1/x is a placeholder. */
  const float two_values[2] = {3, 4};
  TF_Tensor* x_value = tf_floats(two, 1, two_values, 2);
  TF_Output imp1_x = out0(TF_GraphOperationByName(g, "imp_1/x"));
  result = run1(session, &imp1_x, &x_value, 1, out0(TF_GraphOperationByName(g, "imp_1/neg")), s);
  TF_CHECK_OK(s);
  const float want1[2] = {-13, -24};
  CHECK(floats_are(result, want1, 2));
  TF_DeleteTensor(result);
  TF_DeleteTensor(x_value);
  TF_DeleteImportGraphDefOptions(again);

  /* Without a prefix into a graph that has "x" and "sum": with
   * uniquify_names they become x_1 and sum_1, and the inputs follow. */
  TF_ImportGraphDefOptions* plain = TF_NewImportGraphDefOptions();
  TF_ImportGraphDefOptionsSetUniquifyNames(plain, 1);
  TF_Graph* h = TF_NewGraph();
  REQUIRE(placeholder(h, "x", TF_FLOAT, two, 1, s) != NULL);
  REQUIRE(TF_FinishOperation(TF_NewOperation(h, "NoOp", "sum"), s) != NULL);
  TF_GraphImportGraphDef(h, def, plain, s);
  TF_CHECK_OK(s);
  TF_Operation* sum_1 = TF_GraphOperationByName(h, "sum_1");
  REQUIRE(sum_1 != NULL);
  TF_Output sum_1_in = TF_OperationInput(in_at(sum_1, 0));
  CHECK(sum_1_in.oper != NULL && strcmp(TF_OperationName(sum_1_in.oper), "x_1") == 0);
  CHECK(TF_GraphOperationByName(h, "neg") != NULL); /* no clash: kept */
  TF_DeleteImportGraphDefOptions(plain);
  TF_DeleteGraph(h);

  /* Errors, each leaving g as it was. */
  const int count = count_operations(g);
  TF_ImportGraphDefOptions* bad = TF_NewImportGraphDefOptions();
  TF_ImportGraphDefOptionsSetPrefix(bad, "bad");
  TF_ImportGraphDefOptionsAddReturnOutput(bad, "nosuch", 0);
  CHECK(TF_GraphImportGraphDefWithResults(g, def, bad, s) == NULL);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "Requested return tensor 'nosuch:0' not found in graph def");
  TF_DeleteImportGraphDefOptions(bad);
  bad = TF_NewImportGraphDefOptions();
  TF_ImportGraphDefOptionsSetPrefix(bad, "bad");
  TF_ImportGraphDefOptionsAddReturnOutput(bad, "neg", 5);
  CHECK(TF_GraphImportGraphDefWithResults(g, def, bad, s) == NULL);
  TF_CHECK_ERROR2(s, TF_INVALID_ARGUMENT, "Invalid return output 5", "'neg'");
  CHECK(count_operations(g) == count && TF_GraphOperationByName(g, "bad/neg") == NULL);
  TF_Output one_output;
  TF_GraphImportGraphDefWithReturnOutputs(g, def, bad, &one_output, 2, s);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "Expected 'num_return_outputs' to be 1, got 2");
  TF_DeleteImportGraphDefOptions(bad);
  bad = TF_NewImportGraphDefOptions();
  TF_ImportGraphDefOptionsSetPrefix(bad, "bad");
  TF_ImportGraphDefOptionsAddReturnOperation(bad, "nosuch");
  TF_GraphImportGraphDef(g, def, bad, s);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "Requested return node 'nosuch' not found in graph def");
  TF_DeleteImportGraphDefOptions(bad);
  /* A mapping to an operation of another graph. */
  bad = TF_NewImportGraphDefOptions();
  TF_ImportGraphDefOptionsSetPrefix(bad, "bad");
  TF_ImportGraphDefOptionsAddInputMapping(bad, "x", 0, out0(x));
  TF_GraphImportGraphDef(g, def, bad, s);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "is not an operation of the graph");
  TF_DeleteImportGraphDefOptions(bad);
  CHECK(count_operations(g) == count);
  /* The graph still works: bad/ imports cleanly now, returning outputs. */
  bad = TF_NewImportGraphDefOptions();
  TF_ImportGraphDefOptionsSetPrefix(bad, "bad");
  TF_ImportGraphDefOptionsAddReturnOutput(bad, "neg", 0);
  TF_GraphImportGraphDefWithReturnOutputs(g, def, bad, &one_output, 1, s);
  TF_CHECK_OK(s);
  CHECK(one_output.oper == TF_GraphOperationByName(g, "bad/neg") && one_output.oper != NULL);
  TF_DeleteImportGraphDefOptions(bad);

  TF_DeleteSession(session, s);
  TF_CHECK_OK(s);
  TF_DeleteImportGraphDefOptions(opts);
  TF_DeleteBuffer(def);
  TF_DeleteGraph(g);
  TF_DeleteGraph(src);
  TF_DeleteStatus(s);
}

/* 10. TF_AddGradients: y = x * x + 3 * x at x = [1, 2] has dy/dx = 2x + 3;
 * weighted initial gradients; a gradient stopped on the way is {NULL, -1};
 * an unreachable x, a prefix in use and an op without a gradient are
 * errors that leave the graph as it was. */
static void test_gradients(void) {
  TF_Status* s = TF_NewStatus();
  TF_Graph* g = TF_NewGraph();
  const int64_t two[1] = {2};
  const float three_values[2] = {3, 3};
  TF_Operation* x = placeholder(g, "x", TF_FLOAT, two, 1, s);
  TF_Operation* z = placeholder(g, "z", TF_FLOAT, two, 1, s);
  TF_Operation* three = const_floats(g, "three", two, 1, three_values, 2, s);
  REQUIRE(x != NULL && z != NULL && three != NULL);
  TF_Operation* xx = binary(g, "Mul", "xx", out0(x), out0(x), s);
  TF_Operation* x3 = binary(g, "Mul", "x3", out0(x), out0(three), s);
  TF_Operation* stopped = unary(g, "StopGradient", "stopped", out0(z), s);
  TF_Operation* sum = binary(g, "AddV2", "sum", out0(xx), out0(x3), s);
  TF_Operation* y = binary(g, "AddV2", "y", out0(sum), out0(stopped), s);
  REQUIRE(xx != NULL && x3 != NULL && stopped != NULL && sum != NULL && y != NULL);

  TF_Output ys[1] = {out0(y)};
  TF_Output xs[2] = {out0(x), out0(z)};
  TF_Output dy[2] = {{NULL, 0}, {NULL, 0}};
  TF_AddGradients(g, ys, 1, xs, 2, NULL, s, dy);
  TF_CHECK_OK(s);
  REQUIRE(dy[0].oper != NULL);
  CHECK(dy[1].oper == NULL && dy[1].index == -1); /* only through StopGradient */
  CHECK(strncmp(TF_OperationName(dy[0].oper), "gradients/", 10) == 0);
  /* Weighted: dx = [10, 100] * (2x + 3), under a prefix of our own. */
  const float weights[2] = {10, 100};
  TF_Operation* w = const_floats(g, "w", two, 1, weights, 2, s);
  TF_Output dx[1] = {out0(w)};
  TF_Output weighted[1] = {{NULL, 0}};
  TF_AddGradientsWithPrefix(g, "mine", ys, 1, xs, 1, dx, s, weighted);
  TF_CHECK_OK(s);
  REQUIRE(weighted[0].oper != NULL);
  CHECK(strncmp(TF_OperationName(weighted[0].oper), "mine/", 5) == 0);
  /* A second default prefix is made unique. */
  TF_Output again[1] = {{NULL, 0}};
  TF_AddGradients(g, ys, 1, xs, 1, NULL, s, again);
  TF_CHECK_OK(s);
  REQUIRE(again[0].oper != NULL);
  CHECK(strncmp(TF_OperationName(again[0].oper), "gradients_1/", 12) == 0);

  TF_Session* session = TF_NewSession(g, NULL, s);
  TF_CHECK_OK(s);
  /* z is fed too: y's broadcasting gradient reads the shape of each addend. */
  const float x_values[2] = {1, 2};
  TF_Tensor* xz[2] = {tf_floats(two, 1, x_values, 2), tf_floats(two, 1, x_values, 2)};
  TF_Output feeds[2] = {out0(x), out0(z)};
  TF_Tensor* got = run1(session, feeds, xz, 2, dy[0], s);
  TF_CHECK_OK(s);
  const float want[2] = {5, 7};
  CHECK(floats_are(got, want, 2));
  TF_DeleteTensor(got);
  got = run1(session, feeds, xz, 2, weighted[0], s);
  TF_CHECK_OK(s);
  const float want_weighted[2] = {50, 700};
  CHECK(floats_are(got, want_weighted, 2));
  TF_DeleteTensor(got);

  /* Errors, each leaving the graph as it was. */
  const int before = count_operations(g);
  TF_Operation* lonely = placeholder(g, "lonely", TF_FLOAT, two, 1, s);
  TF_Output unreachable[1] = {out0(lonely)};
  TF_Output out[1];
  TF_AddGradients(g, ys, 1, unreachable, 1, NULL, s, out);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT,
                 "Cannot compute the partial derivative for node 'lonely' as it's unreachable from the output node(s).");
  TF_AddGradientsWithPrefix(g, "mine", ys, 1, xs, 1, NULL, s, out);
  TF_CHECK_ERROR(s, TF_INVALID_ARGUMENT, "prefix 'mine' is already used");
  TF_OperationDescription* d = TF_NewOperation(g, "Cumsum", "running");
  TF_AddInput(d, out0(x));
  TF_AddInput(d, out0(const_ints(g, "axis", NULL, 0, (const int32_t[]){0}, 1, s)));
  TF_Operation* running = TF_FinishOperation(d, s);
  TF_CHECK_OK(s);
  REQUIRE(running != NULL);
  TF_Output running_out[1] = {out0(running)};
  TF_AddGradientsWithPrefix(g, "nograd", running_out, 1, xs, 1, NULL, s, out);
  TF_CHECK_ERROR2(s, TF_NOT_FOUND, "No gradient defined for operation 'running'", "Cumsum");
  CHECK(count_operations(g) == before + 3); /* lonely, axis, running: nothing of the failed calls */
  CHECK(TF_GraphOperationByName(g, "nograd/OnesLike") == NULL);
  /* And it still differentiates. */
  TF_AddGradientsWithPrefix(g, "nograd", ys, 1, xs, 1, NULL, s, out);
  TF_CHECK_OK(s);
  got = run1(session, feeds, xz, 2, out[0], s);
  TF_CHECK_OK(s);
  CHECK(floats_are(got, want, 2));
  TF_DeleteTensor(got);

  TF_DeleteTensor(xz[0]);
  TF_DeleteTensor(xz[1]);
  TF_DeleteSession(session, s);
  TF_CHECK_OK(s);
  TF_DeleteGraph(g);
  TF_DeleteStatus(s);
}

/* 11. The older session API: a GraphDef extended in twice and run with
 * names; partial runs answer TF_UNIMPLEMENTED; running before any graph is
 * TF_FAILED_PRECONDITION. */

/* A serialized GraphDef holding one serialized NodeDef (field 1,
 * length-delimited); the caller frees *out. */
static size_t graph_def_of_node(const TF_Buffer* node_def, unsigned char** out) {
  const size_t n = node_def->length;
  unsigned char* bytes = (unsigned char*)malloc(n + 11);
  size_t k = 0;
  bytes[k++] = 0x0a;
  for (size_t v = n;; v >>= 7) {
    bytes[k++] = (unsigned char)((v & 0x7f) | (v >= 0x80 ? 0x80 : 0));
    if (v < 0x80) break;
  }
  memcpy(bytes + k, node_def->data, n);
  *out = bytes;
  return k + n;
}

static void test_deprecated_session(void) {
  TF_Status* s = TF_NewStatus();
  /* x -> neg, as one GraphDef; sq = neg^2 as a second one. */
  TF_Graph* g = TF_NewGraph();
  const int64_t two[1] = {2};
  TF_Operation* x = placeholder(g, "x", TF_FLOAT, two, 1, s);
  REQUIRE(x != NULL);
  TF_Operation* neg = unary(g, "Neg", "neg", out0(x), s);
  REQUIRE(neg != NULL);
  TF_Buffer* first = TF_NewBuffer();
  TF_GraphToGraphDef(g, first, s);
  TF_CHECK_OK(s);
  TF_Operation* sq = unary(g, "Square", "sq", out0(neg), s);
  REQUIRE(sq != NULL);
  TF_Buffer* sq_def = TF_NewBuffer();
  TF_OperationToNodeDef(sq, sq_def, s);
  TF_CHECK_OK(s);
  unsigned char* second = NULL;
  const size_t second_len = graph_def_of_node(sq_def, &second);

  TF_DeprecatedSession* session = TF_NewDeprecatedSession(NULL, s);
  TF_CHECK_OK(s);
  REQUIRE(session != NULL);
  const char* in_names[1] = {"x:0"};
  const char* out_names[2] = {"neg:0", "sq:0"};
  const float x_values[2] = {1.5f, -2.0f};
  TF_Tensor* xv = tf_floats(two, 1, x_values, 2);
  TF_Tensor* outs[2] = {NULL, NULL};
  TF_Run(session, NULL, in_names, &xv, 1, out_names, outs, 1, NULL, 0, NULL, s);
  TF_CHECK_ERROR(s, TF_FAILED_PRECONDITION, "TF_ExtendGraph");
  CHECK(outs[0] == NULL);
  TF_ExtendGraph(session, first->data, first->length, s);
  TF_CHECK_OK(s);
  TF_Run(session, NULL, in_names, &xv, 1, out_names, outs, 1, NULL, 0, NULL, s);
  TF_CHECK_OK(s);
  const float want_neg[2] = {-1.5f, 2.0f};
  CHECK(floats_are(outs[0], want_neg, 2));
  TF_DeleteTensor(outs[0]);
  TF_ExtendGraph(session, second, second_len, s);
  TF_CHECK_OK(s);
  TF_Run(session, NULL, in_names, &xv, 1, out_names, outs, 2, NULL, 0, NULL, s);
  TF_CHECK_OK(s);
  const float want_sq[2] = {2.25f, 4.0f};
  CHECK(floats_are(outs[0], want_neg, 2) && floats_are(outs[1], want_sq, 2));
  TF_DeleteTensor(outs[0]);
  TF_DeleteTensor(outs[1]);
  /* Errors name what is wrong; the session keeps working. */
  const char* bad_out[1] = {"nothere:0"};
  TF_Run(session, NULL, in_names, &xv, 1, bad_out, outs, 1, NULL, 0, NULL, s);
  CHECK(TF_GetCode(s) != TF_OK && strstr(TF_Message(s), "nothere") != NULL && outs[0] == NULL);
  TF_ExtendGraph(session, "garbage", 7, s);
  CHECK(TF_GetCode(s) == TF_INVALID_ARGUMENT);
  const char* handle = "not set";
  TF_PRunSetup(session, in_names, 1, out_names, 1, NULL, 0, &handle, s);
  TF_CHECK_ERROR(s, TF_UNIMPLEMENTED, "partial runs are not supported");
  CHECK(handle == NULL);
  TF_DeletePRunHandle(handle);
  TF_Run(session, NULL, in_names, &xv, 1, out_names, outs, 1, NULL, 0, NULL, s);
  TF_CHECK_OK(s);
  TF_DeleteTensor(outs[0]);
  TF_CloseDeprecatedSession(session, s);
  TF_CHECK_OK(s);
  TF_Run(session, NULL, in_names, &xv, 1, out_names, outs, 1, NULL, 0, NULL, s);
  CHECK(TF_GetCode(s) != TF_OK && outs[0] == NULL);
  TF_DeleteDeprecatedSession(session, s);
  TF_DeleteTensor(xv);
  free(second);
  TF_DeleteBuffer(sq_def);
  TF_DeleteBuffer(first);
  TF_DeleteGraph(g);
  TF_DeleteStatus(s);
}

int main(void) {
  test_build_and_run();
  test_lists();
  test_shapes();
  test_inspection();
  test_attrs();
  test_errors();
  test_session_grows();
  test_long_chain();
  test_import_options();
  test_gradients();
  test_deprecated_session();
  if (c_test_failures() == 0) printf("all TF C API build checks passed\n");
  return c_test_exit();
}
